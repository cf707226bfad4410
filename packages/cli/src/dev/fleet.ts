import { relative } from 'node:path';
import type { BerthServer, LbControl } from '@berth/server';
import { batchLanePolicy, batchLaneViews, ScaleLoop, type GpuAllocator } from '@berth/server/scaling';
import type { ResolvedEndpoint } from '../config/index.js';
import type { Logger } from '@berth/protocol/log';
import type { WorkerSpec, WorkerSupervisor } from '../internal/supervisor.js';
import { checkHandler } from './handler-check.js';
import { ProcessPool } from './process-pool.js';
import { HttpWorkers } from '../internal/http-workers.js';
import { FileWatcher, type WatchMode } from './watcher.js';

export interface FleetOptions {
  server: Pick<BerthServer, 'workers' | 'health' | 'lb'>;
  supervisor: WorkerSupervisor;
  endpoints: readonly ResolvedEndpoint[];
  /** The folder paths are shown relative to. */
  dir: string;
  /** The config file: a change to it is pointed out (it is read once, at start). */
  configFile?: string;
  /** The process spec of worker `workerId` of an endpoint. */
  specFor: (ep: ResolvedEndpoint, workerId: string) => WorkerSpec;
  logger: Logger;
  /** How often the scaler looks at queue depth and idle workers. Default 100 ms. */
  tickMs?: number;
  /** Watch handler files and restart their workers on change. Default true. */
  watch?: boolean;
  /** How changes are noticed (`./watcher.ts`): file events with a stat poll behind them, or the poll alone. */
  watchMode?: WatchMode;
  /**
   * The box's GPUs, when an endpoint has `gpusPerWorker`: its workers (fixed count or scaled) are started by the
   * scale loop, each once its GPUs are free, with them as `CUDA_VISIBLE_DEVICES`.
   */
  gpus?: GpuAllocator;
  /** Called when `berth dev` must stop: a handler failed to load at startup. */
  onFatal: (message: string) => void;
}

interface EndpointState {
  ep: ResolvedEndpoint;
  /** The handler and the local files it imports. */
  inputs: string[];
  /** Why its workers are not started: a handler that failed to build or load, until the next change. */
  broken: string | undefined;
  /**
   * A load failure stops berth dev while this holds: for the workers started with berth dev (`minWorkers` > 0)
   * until one of them connects. Later failures (a cold start, a reload) are reported and wait for a fix.
   */
  fatal: boolean;
}

/**
 * Keeps each endpoint's workers as `berth dev` promises: `minWorkers` to `maxWorkers` by queue depth with an
 * idle timeout (scale to zero: the scale loop over the process pool), hot reload of changed handler files
 * (running jobs are requeued), `/health` counting spawned-but-unconnected workers as initializing, and a clear
 * failure when a handler cannot load.
 */
export class Fleet {
  readonly #o: FleetOptions;
  readonly #state = new Map<string, EndpointState>();
  readonly #watcher: FileWatcher | undefined;
  readonly #pool: ProcessPool;
  readonly #http: HttpWorkers | undefined;
  readonly #loop: ScaleLoop;
  /** Endpoints with a batch lane (`batch.maxWorkers`): their lane workers' pool and loop (server `batch-lane.ts`). */
  readonly #lane: { pool: ProcessPool; loop: ScaleLoop } | undefined;
  readonly #unsubscribe: () => void;

  constructor(o: FleetOptions) {
    this.#o = o;
    for (const ep of o.endpoints)
      this.#state.set(ep.id, { ep, inputs: [], broken: undefined, fatal: ep.minWorkers > 0 });
    const http = o.endpoints.some((ep) => ep.http) ? new HttpWorkers(o.server.lb) : undefined;
    this.#http = http;
    const laneEps = o.endpoints.filter((ep) => ep.batch !== undefined && !ep.http && ep.maxWorkers > 0);
    const views = batchLaneViews(o.server, new Set(laneEps.map((ep) => ep.id)));
    this.#pool = new ProcessPool({
      supervisor: o.supervisor,
      workers: views.interactive.workers,
      specFor: (id, workerId) => {
        const spec = o.specFor(this.#state.get(id)!.ep, workerId);
        return http?.has(id) ? httpSpec(spec, http.env(workerId)) : spec;
      },
      broken: (id) => this.#state.get(id)?.broken !== undefined,
      ...(o.gpus
        ? { gpus: { allocator: o.gpus, perWorker: (id: string) => this.#state.get(id)?.ep.gpusPerWorker ?? 0 } }
        : {}),
      ...(http ? { http } : {}),
    });
    // Endpoints with a fixed count are kept by the supervisor's restarts; the loop scales the others, and starts
    // those whose workers need GPUs (each when its devices are free).
    this.#lane = laneEps.length === 0 ? undefined : this.#laneLoop(laneEps, views.batch);
    this.#loop = new ScaleLoop({
      server: views.interactive,
      pool: this.#pool,
      endpoints: o.endpoints.filter((ep) => ep.minWorkers < ep.maxWorkers || (ep.maxWorkers > 0 && placesGpus(ep))),
      ...(o.gpus ? { gpus: o.gpus } : {}),
      logger: o.logger,
      ...(o.tickMs !== undefined ? { tickMs: o.tickMs } : {}),
    });
    // At once, not on the loop's next look: a worker killed right after connecting is not a handler that failed to load.
    this.#unsubscribe = o.server.workers.on('connected', (workerId, endpointId) => {
      o.supervisor.markConnected(workerId);
      const st = this.#state.get(endpointId);
      if (st) st.fatal = false;
    });
    if (http) this.#hookHttp(o.server.lb);
    this.#watcher =
      o.watch === false
        ? undefined
        : new FileWatcher((files) => void this.#onChange(files), { mode: o.watchMode ?? 'auto' });
  }

  /** The batch lanes' pool (workers `<endpoint>-batch-<n>`) and their scale loop, from zero by batch backlog. */
  #laneLoop(
    eps: readonly ResolvedEndpoint[],
    server: ReturnType<typeof batchLaneViews>['batch'],
  ): { pool: ProcessPool; loop: ScaleLoop } {
    const o = this.#o;
    const pool = new ProcessPool({
      supervisor: o.supervisor,
      workers: server.workers,
      specFor: (id, workerId) => o.specFor(this.#state.get(id)!.ep, workerId),
      broken: (id) => this.#state.get(id)?.broken !== undefined,
      ...(o.gpus
        ? { gpus: { allocator: o.gpus, perWorker: (id: string) => this.#state.get(id)?.ep.gpusPerWorker ?? 0 } }
        : {}),
      lane: 'batch',
    });
    const loop = new ScaleLoop({
      server,
      pool,
      endpoints: eps.map((ep) => batchLanePolicy(ep, ep.batch!)),
      ...(o.gpus ? { gpus: o.gpus } : {}),
      logger: o.logger.child({ lane: 'batch' }),
      ...(o.tickMs !== undefined ? { tickMs: o.tickMs } : {}),
    });
    for (const ep of eps) o.server.workers.setBatchLane(ep.id, true);
    return { pool, loop };
  }

  /**
   * Checks every handler (esbuild, no code run), then starts `minWorkers` of each endpoint and the scaler.
   * Returns an error message instead when a handler does not compile.
   */
  async start(): Promise<string | undefined> {
    const problems: string[] = [];
    for (const st of this.#state.values()) {
      if (st.ep.maxWorkers === 0) continue;
      if (st.ep.http && !st.ep.command) {
        problems.push(
          `endpoint ${st.ep.id}: a "type": "http" endpoint with only "image" runs under berth serve --scale docker; give it a "command" for berth dev`,
        );
        continue;
      }
      const check = await this.#check(st);
      if (!check.ok)
        problems.push(
          `endpoint ${st.ep.id}: handler ${this.#rel(st.ep.worker)} does not compile:\n${indent(check.message)}`,
        );
      else st.inputs = check.inputs;
    }
    if (problems.length) return problems.join('\n');
    this.#watcher?.update(this.#allInputs());
    for (const st of this.#state.values())
      if (!placesGpus(st.ep)) for (let i = 0; i < st.ep.minWorkers; i++) this.#pool.start(st.ep.id);
    this.#loop.start();
    this.#lane?.loop.start();
    return undefined;
  }

  stop(): void {
    void this.#loop.stop();
    if (this.#lane) void this.#lane.loop.stop();
    this.#unsubscribe();
    this.#watcher?.close();
  }

  /**
   * Load-balancing endpoints: a request waiting with no worker looks at once (a cold start begins); a worker whose
   * `/ping` answered 200 counts as connected; one failing health is drained and started again; `strict-resume`
   * starts a scaled-down worker again under its id.
   */
  #hookHttp(lb: LbControl): void {
    lb.hooks.demand = () => void this.#loop.tick();
    lb.hooks.ready = (endpointId, workerId) => {
      this.#o.supervisor.markConnected(workerId);
      const st = this.#state.get(endpointId);
      if (st) st.fatal = false;
    };
    lb.hooks.unhealthy = (_endpointId, workerId) => {
      // A worker that exited is restarted by the supervisor already; a live one that stopped answering is replaced.
      if (!this.#o.supervisor.pids().has(workerId)) return;
      void lb.drain(workerId).then(() => {
        this.#o.supervisor.respawn(workerId);
        lb.restarted(workerId);
      });
    };
    lb.hooks.resume = (endpointId, workerId) =>
      this.#pool.canStart(endpointId) &&
      this.#pool.list(endpointId).length < (this.#state.get(endpointId)?.ep.maxWorkers ?? 0) &&
      this.#pool.startAs(endpointId, workerId);
  }

  /** A worker exited before it reached the control plane: its handler threw while loading (or was refused). */
  onLoadFailure(spec: WorkerSpec, how: string): void {
    this.#http?.removed(spec.workerId, false);
    const st = this.#state.get(spec.endpointId);
    if (!st) return;
    const what = `endpoint ${st.ep.id}: handler ${this.#rel(st.ep.worker)} failed to load (worker ${spec.workerId} ${how} before connecting; its error is above)`;
    this.#syncExpected(st);
    if (st.fatal) return this.#o.onFatal(what);
    if (st.broken) return;
    this.#setBroken(st, what);
    this.#o.logger.error(`${what}. Fix it and save: berth dev reloads it (queued jobs wait until then).`);
  }

  /** A worker was given up on after repeated crashes. */
  onGiveUp(spec: WorkerSpec): void {
    this.#http?.removed(spec.workerId, false);
    const st = this.#state.get(spec.endpointId);
    if (st) this.#syncExpected(st);
  }

  /** Why the endpoint cannot start workers (undefined: it can); /health shows it as one `unhealthy` worker. */
  #setBroken(st: EndpointState, why: string | undefined): void {
    st.broken = why;
    this.#o.server.workers.setBroken(st.ep.id, why !== undefined);
    if (st.ep.http) this.#o.server.lb.setBroken(st.ep.id, why);
  }

  #syncExpected(st: EndpointState): void {
    this.#pool.sync(st.ep.id);
  }

  async #onChange(files: string[]): Promise<void> {
    if (this.#o.configFile !== undefined && files.includes(this.#o.configFile)) {
      this.#o.logger.warn(
        `${this.#rel(this.#o.configFile)} changed: restart berth dev to apply it (endpoints and scaling are read at start)`,
      );
    }
    for (const st of this.#state.values()) {
      const changed = files.filter((f) => st.inputs.includes(f));
      if (changed.length === 0) continue;
      const check = await this.#check(st);
      if (!check.ok) {
        this.#setBroken(st, `endpoint ${st.ep.id}: handler does not compile`);
        this.#o.logger.error(
          `endpoint ${st.ep.id}: ${changed.map((f) => this.#rel(f)).join(', ')} changed but does not compile; its workers keep the previous code. Fix it and save:\n${indent(check.message)}`,
        );
        continue;
      }
      st.inputs = check.inputs;
      this.#setBroken(st, undefined);
      const ids = this.#o.supervisor.workerIds(st.ep.id);
      this.#o.logger.info(
        `${changed.map((f) => this.#rel(f)).join(', ')} changed: reloading ${st.ep.id} (${ids.length} worker${ids.length === 1 ? '' : 's'}; running jobs are requeued)`,
        { endpointId: st.ep.id },
      );
      for (const id of ids) this.#o.supervisor.respawn(id);
      // Workers the scaler had given up on or that failed to load come back with minWorkers.
      if (!placesGpus(st.ep))
        for (let i = this.#pool.list(st.ep.id).length; i < st.ep.minWorkers; i++) this.#pool.start(st.ep.id);
    }
    this.#watcher?.update(this.#allInputs());
  }

  /** A TypeScript handler is compiled (no code run); a command endpoint's files are watched as they are. */
  #check(st: EndpointState): ReturnType<typeof checkHandler> {
    if (st.ep.command) return Promise.resolve({ ok: true, inputs: st.ep.commandFiles ?? [] });
    return checkHandler(st.ep.worker, this.#o.dir);
  }

  #allInputs(): string[] {
    const files = [...this.#state.values()].flatMap((st) => st.inputs);
    return this.#o.configFile !== undefined ? [...files, this.#o.configFile] : files;
  }

  #rel(file: string): string {
    return relative(this.#o.dir, file) || file;
  }
}

/** Whether the endpoint's workers get GPUs of their own (then the scale loop starts them, as devices are free). */
function placesGpus(ep: ResolvedEndpoint): boolean {
  return (ep.gpusPerWorker ?? 0) > 0;
}

/** An HTTP worker's process: `PORT` and `PORT_HEALTH` set, and `$PORT` / `$PORT_HEALTH` in its command replaced. */
function httpSpec(spec: WorkerSpec, env: Record<string, string>): WorkerSpec {
  const sub = (w: string) => w.replace(/\$\{?(PORT_HEALTH|PORT)\}?/g, (_, k: string) => env[k] ?? '');
  return { ...spec, env: { ...spec.env, ...env }, ...(spec.command ? { command: spec.command.map(sub) } : {}) };
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}
