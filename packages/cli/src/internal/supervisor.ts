import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Logger } from './console-logger.js';
import { paint, type Style } from './io.js';

/** One worker process to keep running. */
export interface WorkerSpec {
  endpointId: string;
  workerId: string;
  /** Absolute path of the handler file. */
  file: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface RestartPolicy {
  /** A worker that exits sooner than this after starting counts as an immediate crash. Default 5000. */
  minUptimeMs: number;
  /** Delay before the first restart; doubles with each immediate crash in a row. Default 500. */
  baseDelayMs: number;
  /** Upper bound of the restart delay. Default 8000. */
  maxDelayMs: number;
  /** Give up on a worker after this many immediate crashes in a row. Default 5. */
  maxImmediateCrashes: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  minUptimeMs: 5_000,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxImmediateCrashes: 5,
};

export interface SupervisorOptions {
  /** `file:` URL of the tsx loader, passed to `node --import`. */
  loaderUrl: string;
  /** Where the prefixed worker output goes. */
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  logger: Logger;
  color: boolean;
  restart?: Partial<RestartPolicy>;
  /** Called when the supervisor stops restarting a worker. */
  onGiveUp?: (spec: WorkerSpec) => void;
}

interface Slot {
  spec: WorkerSpec;
  prefix: string;
  child: ChildProcess | undefined;
  startedAt: number;
  crashesInARow: number;
  restarts: number;
  timer: NodeJS.Timeout | undefined;
  gaveUp: boolean;
  exited: Promise<void>;
}

const PREFIX_COLORS: Style[] = ['cyan', 'magenta', 'green', 'yellow', 'blue'];

/**
 * Runs worker processes (`node --import tsx <file>`), prefixes each output line with `[<endpoint>/<workerId>]`,
 * and restarts a worker that exits, with exponential backoff; after `maxImmediateCrashes` crashes in a row
 * within `minUptimeMs` of starting, it gives up on that worker and says so.
 */
export class WorkerSupervisor {
  readonly #opts: SupervisorOptions;
  readonly #policy: RestartPolicy;
  readonly #slots: Slot[];
  #stopping = false;

  constructor(specs: readonly WorkerSpec[], opts: SupervisorOptions) {
    this.#opts = opts;
    this.#policy = { ...DEFAULT_RESTART_POLICY, ...opts.restart };
    const c = paint(opts.color);
    const endpoints = [...new Set(specs.map((s) => s.endpointId))];
    this.#slots = specs.map((spec) => ({
      spec,
      prefix: c(PREFIX_COLORS[endpoints.indexOf(spec.endpointId) % PREFIX_COLORS.length] ?? 'cyan', `[${spec.endpointId}/${spec.workerId}]`),
      child: undefined,
      startedAt: 0,
      crashesInARow: 0,
      restarts: 0,
      timer: undefined,
      gaveUp: false,
      exited: Promise.resolve(),
    }));
  }

  /** Spawns every worker. */
  start(): void {
    for (const slot of this.#slots) this.#spawn(slot);
  }

  /** Process ids of the running workers, by worker id. */
  pids(): Map<string, number> {
    const out = new Map<string, number>();
    for (const s of this.#slots) if (s.child?.pid !== undefined && s.child.exitCode === null && s.child.signalCode === null) out.set(s.spec.workerId, s.child.pid);
    return out;
  }

  /** Stops restarting workers (call before telling the control plane to drain). */
  beginShutdown(): void {
    this.#stopping = true;
    for (const s of this.#slots) clearTimeout(s.timer);
  }

  /**
   * Sends SIGTERM to every worker and waits for them to exit; after `timeoutMs`, SIGKILL for the rest.
   * Resolves once all have exited (or a short grace period after SIGKILL).
   */
  async stop(timeoutMs: number): Promise<void> {
    this.beginShutdown();
    const live = this.#slots.filter((s) => s.child && s.child.exitCode === null && s.child.signalCode === null);
    for (const s of live) s.child?.kill('SIGTERM');
    const all = Promise.all(live.map((s) => s.exited));
    if (await settlesWithin(all, timeoutMs)) return;
    for (const s of live) {
      if (s.child && s.child.exitCode === null && s.child.signalCode === null) {
        this.#opts.logger.warn(`${s.spec.endpointId}/${s.spec.workerId} did not exit within ${timeoutMs} ms of SIGTERM; killing it`);
        s.child.kill('SIGKILL');
      }
    }
    await settlesWithin(all, 2_000);
  }

  /** SIGKILL every worker now (second Ctrl-C). */
  killAll(): void {
    this.beginShutdown();
    for (const s of this.#slots) if (s.child && s.child.exitCode === null) s.child.kill('SIGKILL');
  }

  #spawn(slot: Slot): void {
    const { spec } = slot;
    const child = spawn(process.execPath, ['--import', this.#opts.loaderUrl, spec.file], {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    slot.child = child;
    slot.startedAt = Date.now();
    let done!: () => void;
    slot.exited = new Promise<void>((r) => (done = r));

    const pipe = (stream: NodeJS.ReadableStream | null, out: NodeJS.WritableStream) => {
      if (!stream) return;
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => out.write(`${slot.prefix} ${line}\n`));
    };
    pipe(child.stdout, this.#opts.stdout);
    pipe(child.stderr, this.#opts.stderr);

    if (child.pid !== undefined) this.#opts.stdout.write(`${slot.prefix} worker started (pid ${child.pid})\n`);

    let reported = false;
    const onEnd = (code: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
      if (reported) return;
      reported = true;
      done();
      this.#onExit(slot, code, signal, spawnError);
    };
    child.once('error', (err) => onEnd(null, null, err));
    child.once('close', (code, signal) => onEnd(code, signal));
  }

  #onExit(slot: Slot, code: number | null, signal: NodeJS.Signals | null, spawnError?: Error): void {
    const { spec } = slot;
    const how = spawnError
      ? `could not start: ${spawnError.message}`
      : signal
        ? `was killed by ${signal}`
        : code === 0
          ? 'exited with code 0 (does it call start() from @berth/worker?)'
          : `exited with code ${code}`;
    if (this.#stopping) {
      this.#opts.stdout.write(`${slot.prefix} worker stopped\n`);
      return;
    }
    const uptime = Date.now() - slot.startedAt;
    slot.crashesInARow = uptime < this.#policy.minUptimeMs ? slot.crashesInARow + 1 : 1;
    const { logger } = this.#opts;
    const name = `${spec.endpointId}/${spec.workerId}`;
    if (slot.crashesInARow >= this.#policy.maxImmediateCrashes) {
      slot.gaveUp = true;
      logger.error(
        `worker ${name} ${how}; it crashed ${slot.crashesInARow} times in a row within ${this.#policy.minUptimeMs / 1000} s of starting, ` +
          `so berth is giving up on it. Fix the error above in ${spec.file}, then restart berth dev.`,
      );
      this.#opts.onGiveUp?.(spec);
      return;
    }
    const delay = Math.min(this.#policy.maxDelayMs, this.#policy.baseDelayMs * 2 ** (slot.crashesInARow - 1));
    slot.restarts++;
    logger.warn(`worker ${name} ${how} after ${formatMs(uptime)}; restarting in ${formatMs(delay)}`, {
      restart: slot.restarts,
    });
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      if (!this.#stopping) this.#spawn(slot);
    }, delay);
  }
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([p.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
