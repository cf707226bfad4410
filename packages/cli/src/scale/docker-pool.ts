import type { Logger } from '@berth/protocol/log';
import type { JobRecord, WorkerControl } from '@berth/server';
import { nextWorkerId, type PoolWorker, type WorkerPool } from '@berth/server/scaling';
import { DEFAULT_RESTART_POLICY } from '../internal/supervisor-types.js';
import { containerSpec, LABEL_CONTROL_PLANE, LABEL_ENDPOINT, type ScaledEndpoint } from './container-spec.js';
import { DockerError, type ContainerSummary, type DockerApi } from './docker-api.js';
import { deploySettings } from '../build/deploy.js';
import {
  backoffDelay,
  errorText,
  IMAGE_RETRY_MS,
  newEndpointState,
  type EndpointState,
  type Tracked,
} from './scaler-state.js';

export interface DockerPoolOptions {
  /** The control plane's `server.workers`: connections, cold starts, start failures, broken endpoints. */
  workers: WorkerControl;
  docker: DockerApi;
  endpoints: readonly ScaledEndpoint[];
  /** The `berth.control-plane` label: every replica of one control plane uses the same name. */
  name: string;
  /** `BERTH_URL` of the workers: where they reach the control plane (a balancer in front of replicas). */
  url: string;
  logger: Logger;
  /** Clock (epoch ms). Default Date.now. */
  now?: () => number;
}

/**
 * `berth serve --scale docker`'s workers: one container each, through the Docker Engine API. A stop drains
 * (`docker stop` with the stop timeout of `deploy.json`); a crash is removed and the next start waits berth dev's
 * backoff; containers of this control plane found at start are adopted, those of endpoints no longer configured
 * removed. The scale loop (`ScaleLoop`) decides; this pool lists, starts and stops.
 */
export class DockerPool implements WorkerPool {
  /** A look lists the daemon's containers (a call): every 250 ms, and a cold start begins between looks. */
  readonly cost = { tickMs: 250, wakeMs: 50 };
  /** Containers reach the control plane through a balancer: they may be connected to another replica. */
  readonly sharedByReplicas = true;
  readonly #o: DockerPoolOptions;
  readonly #state = new Map<string, EndpointState>();
  readonly #removing = new Set<string>();
  readonly #now: () => number;
  readonly #unsubscribe: (() => void)[];
  #daemonDown: string | undefined;

  constructor(o: DockerPoolOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
    for (const s of o.endpoints) this.#state.set(s.ep.id, newEndpointState(s));
    this.#unsubscribe = [
      o.workers.on('connected', (workerId, endpointId) => this.#connected(workerId, endpointId)),
      o.workers.on('jobFinished', (job) => this.#jobFinished(job)),
    ];
  }

  /** Stops listening to the control plane (the containers keep running: the next start adopts them). */
  close(): void {
    for (const off of this.#unsubscribe) off();
  }

  async refresh(now: number, leading: boolean): Promise<boolean> {
    let list: ContainerSummary[];
    try {
      list = await this.#o.docker.listContainers([`${LABEL_CONTROL_PLANE}=${this.#o.name}`]);
    } catch (err) {
      this.#setDaemonDown(errorText(err));
      return false;
    }
    if (leading) {
      this.#o.logger.info(`scaling worker containers with ${this.#o.docker.describe()}`, {
        controlPlane: this.#o.name,
        found: list.length,
      });
      void this.#checkStorageDriver();
    }
    this.#setDaemonDown(undefined);
    for (const c of list) if (!this.#state.has(c.Labels[LABEL_ENDPOINT] ?? '')) this.#removeStray(c);
    for (const st of this.#state.values())
      await this.#reconcile(
        st,
        list.filter((c) => c.Labels[LABEL_ENDPOINT] === st.s.ep.id),
        now,
      );
    return true;
  }

  list(endpointId: string): PoolWorker[] {
    const st = this.#state.get(endpointId);
    if (!st) return [];
    return [...st.workers.values()]
      .filter((t) => !t.draining)
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((t) => ({ id: t.name, startedAt: t.createdAt, pending: t.id === '' }));
  }

  canStart(endpointId: string, now: number): boolean {
    const st = this.#state.get(endpointId);
    return st !== undefined && this.#daemonDown === undefined && now >= st.notBefore;
  }

  start(endpointId: string): void {
    const st = this.#state.get(endpointId);
    if (st) this.#create(st, this.#now());
  }

  stop(endpointId: string, workerId: string): void {
    const t = this.#state.get(endpointId)?.workers.get(workerId);
    if (!t) return;
    t.draining = true;
    this.#o.workers.stopping(workerId);
    // SIGTERM: the worker drains (running jobs finish or are handed back), then exits; SIGKILL after the timeout.
    const stopTimeout = deploySettings(this.#state.get(endpointId)!.s.ep).stopTimeoutSeconds;
    this.#o.docker.stopContainer(t.id, stopTimeout).catch((err: unknown) => {
      this.#o.logger.warn(`could not stop ${workerId}`, { error: errorText(err) });
    });
  }

  /** The containers listed for one endpoint: new ones adopted, exited ones reaped, vanished ones forgotten. */
  async #reconcile(st: EndpointState, found: ContainerSummary[], now: number): Promise<void> {
    const ep = st.s.ep;
    const seen = new Set<string>();
    for (const c of found) {
      const name = (c.Names[0] ?? c.Id).replace(/^\//, '');
      seen.add(name);
      let t = st.workers.get(name);
      if (!t) {
        t = {
          name,
          id: c.Id,
          createdAt: c.Created * 1000,
          adopted: true,
          connected: false,
          draining: false,
          starting: false,
          timed: true,
        };
        st.workers.set(name, t);
        if (c.State === 'running') this.#o.logger.info(`adopted worker container ${name}`, { endpointId: ep.id });
      }
      // Not while its start call is pending: a container that exits at once is listed as exited before the call
      // returns, and handling it twice (here, and as a failed start) would count one crash twice.
      if ((c.State === 'exited' || c.State === 'dead') && !t.starting) await this.#exited(st, t, now);
    }
    for (const t of st.workers.values()) if (t.id !== '' && !t.starting && !seen.has(t.name)) st.workers.delete(t.name);
    for (const w of this.#o.workers.connected(ep.id)) this.#connected(w.workerId, ep.id, now);
  }

  /** A worker said hello to this control plane: the end of its boot, and the end of its endpoint's crash run. */
  #connected(workerId: string, endpointId: string, now = this.#now()): void {
    const st = this.#state.get(endpointId);
    const t = st?.workers.get(workerId);
    if (!st || !t || t.connected) return;
    t.connected = true;
    t.connectedAt ??= now;
    st.crashesInARow = 0;
    this.#setProblem(st, undefined);
  }

  /**
   * A job finished: the first one of a container started here times its cold start (the metric), and an info
   * line gives its parts: the job's wait for the scaler, the create and start calls, the boot inside the container
   * up to its hello, the assignment and the run.
   */
  #jobFinished(job: JobRecord): void {
    const t = job.workerId === undefined ? undefined : this.#state.get(job.endpointId)?.workers.get(job.workerId);
    if (!t || t.adopted || t.timed || job.startedAt === undefined) return;
    t.timed = true;
    const ep = job.endpointId;
    const finishedAt = job.finishedAt ?? this.#now();
    this.#o.workers.coldStart(ep, 'first_job_assigned', job.startedAt - t.createdAt);
    this.#o.workers.coldStart(ep, 'first_job_done', finishedAt - t.createdAt);
    const parts = coldStartParts(t, job, finishedAt);
    const text = Object.entries(parts)
      .map(([k, v]) => `${k} ${v} ms`)
      .join(', ');
    this.#o.logger.info(`cold start of ${t.name}: ${finishedAt - t.createdAt} ms (${text})`, {
      endpointId: ep,
      ...parts,
    });
  }

  #create(st: EndpointState, now: number): void {
    const ep = st.s.ep;
    const name = nextWorkerId(`${this.#o.name}-${ep.id}`, [...st.workers.keys()]);
    const t: Tracked = {
      name,
      id: '',
      createdAt: now,
      adopted: false,
      connected: false,
      draining: false,
      starting: true,
      timed: false,
    };
    st.workers.set(name, t);
    const { docker } = this.#o;
    void (async () => {
      try {
        t.createdAt = this.#now();
        t.id = await docker.createContainer(name, containerSpec(st.s, name, this.#o.name, this.#o.url));
        t.createdDoneAt = this.#now();
        await docker.startContainer(t.id);
        t.startedAt = this.#now();
        t.starting = false;
      } catch (err) {
        // Still tracked (and starting) while it is removed: neither a tick nor the wake starts another meanwhile,
        // and its exit is not counted as a second crash.
        if (t.id) await docker.removeContainer(t.id).catch(() => {});
        t.starting = false;
        st.workers.delete(name);
        if (err instanceof DockerError && err.status === 404 && /image/i.test(err.message)) {
          st.notBefore = this.#now() + IMAGE_RETRY_MS;
          this.#o.workers.startFailed(ep.id, 'image_missing');
          return this.#setProblem(
            st,
            `endpoint ${ep.id}: image ${st.s.image} not found in the docker daemon (build it: berth build, then docker build -t ${st.s.image} <folder>); looking again in ${IMAGE_RETRY_MS / 1000} s`,
          );
        }
        if (err instanceof DockerError && err.status === 409) {
          // A container of that name is left from elsewhere: remove it, the next tick starts a new one.
          return void docker.removeContainer(name).catch(() => {});
        }
        this.#o.workers.startFailed(ep.id, 'create_failed');
        this.#backoff(st, `endpoint ${ep.id}: could not start a worker container: ${errorText(err)}`);
      }
    })();
  }

  /** A container stopped: removed; unless the scaler stopped it, a crash (backoff before the next start). */
  async #exited(st: EndpointState, t: Tracked, now: number): Promise<void> {
    if (this.#removing.has(t.id)) return;
    this.#removing.add(t.id);
    try {
      const { exitCode, tail } = await this.#o.docker.exitOf(t.id).catch(() => ({ exitCode: -1, tail: '' }));
      await this.#o.docker.removeContainer(t.id);
      st.workers.delete(t.name);
      if (t.draining) {
        this.#o.logger.info(`worker container ${t.name} stopped (exit ${exitCode})`, { endpointId: st.s.ep.id });
        return;
      }
      const upS = ((now - t.createdAt) / 1000).toFixed(1);
      const why = `endpoint ${st.s.ep.id}: worker container ${t.name} exited with code ${exitCode} ${t.connected ? 'after' : 'before connecting, after'} ${upS} s`;
      const output = tail ? `; its last output:\n${tail.replace(/^/gm, '    ')}` : '';
      if (t.connected && now - t.createdAt >= DEFAULT_RESTART_POLICY.minUptimeMs) {
        this.#o.logger.warn(`${why}; starting another${output}`);
      } else {
        this.#o.workers.startFailed(st.s.ep.id, 'exited_early');
        this.#backoff(st, `${why}${output}`);
      }
    } finally {
      this.#removing.delete(t.id);
    }
  }

  /** A crash in a row: the next start waits berth dev's backoff (500 ms doubling to 8 s; 60 s after 5 in a row). */
  #backoff(st: EndpointState, why: string): void {
    st.crashesInARow++;
    const delay = backoffDelay(st.crashesInARow);
    st.notBefore = this.#now() + delay;
    this.#o.logger.error(`${why}\n  next start in ${delay / 1000} s (crash ${st.crashesInARow} in a row)`);
    this.#setProblem(st, why);
  }

  #setProblem(st: EndpointState, why: string | undefined): void {
    const was = st.problem;
    st.problem = why;
    this.#o.workers.setBroken(st.s.ep.id, why !== undefined || this.#daemonDown !== undefined);
    if (why !== undefined && why !== was && !why.includes('exited with code')) this.#o.logger.error(why);
  }

  #setDaemonDown(why: string | undefined): void {
    if (why !== undefined && this.#daemonDown === undefined) {
      for (const id of this.#state.keys()) this.#o.workers.startFailed(id, 'daemon_down');
      this.#o.logger.error(
        `docker daemon at ${this.#o.docker.describe()} does not answer (${why}): no worker container can start; trying again every tick`,
      );
    }
    if (why === undefined && this.#daemonDown !== undefined)
      this.#o.logger.info(`docker daemon at ${this.#o.docker.describe()} answers again`);
    const changed = (why === undefined) !== (this.#daemonDown === undefined);
    this.#daemonDown = why;
    if (changed) for (const st of this.#state.values()) this.#setProblem(st, st.problem);
  }

  /** `vfs` copies the whole image at every container create (seconds per cold start): said once, as a warning. */
  async #checkStorageDriver(): Promise<void> {
    let driver = '';
    try {
      driver = await this.#o.docker.storageDriver();
    } catch {
      // Not known: nothing to say.
    }
    if (driver === 'vfs')
      this.#o.logger.warn(
        `docker storage driver is vfs: every container create copies the whole image (about 7 s per cold start for a 240 MB image on the build machine, against 10 ms with overlay2); run dockerd with --storage-driver overlay2 (or fuse-overlayfs where the kernel has no overlay)`,
      );
  }

  /** A container of this control plane whose endpoint is no longer configured: drained and removed. */
  #removeStray(c: ContainerSummary): void {
    if (this.#removing.has(c.Id)) return;
    this.#removing.add(c.Id);
    const name = (c.Names[0] ?? c.Id).replace(/^\//, '');
    this.#o.logger.info(`removing ${name}: endpoint ${c.Labels[LABEL_ENDPOINT] ?? '?'} is no longer configured`);
    const { docker } = this.#o;
    void (c.State === 'running' ? docker.stopContainer(c.Id, 30) : Promise.resolve())
      .then(() => docker.removeContainer(c.Id))
      .catch((err: unknown) => this.#o.logger.warn(`could not remove ${name}`, { error: errorText(err) }))
      .finally(() => this.#removing.delete(c.Id));
  }
}

/**
 * The parts of a cold start (ms): `scaler` the job's wait before the create call (when it was queued first),
 * `create` and `start` the Docker calls, `boot` from the start call's return to the worker's hello (node, the
 * bundle, the WebSocket), `assign` from the hello to the job's start, `run` the job itself.
 */
export function coldStartParts(t: Tracked, job: JobRecord, finishedAt: number): Record<string, number> {
  const parts: Record<string, number> = {};
  if (job.queuedAt <= t.createdAt) parts['scaler'] = t.createdAt - job.queuedAt;
  const marks: [string, number | undefined][] = [
    ['create', t.createdDoneAt],
    ['start', t.startedAt],
    ['boot', t.connectedAt],
    ['assign', job.startedAt],
    ['run', finishedAt],
  ];
  let last = t.createdAt;
  for (const [k, at] of marks) {
    if (at === undefined) continue;
    parts[k] = Math.max(0, at - last);
    last = at;
  }
  return parts;
}
