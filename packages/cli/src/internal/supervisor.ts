import type { ChildProcess } from 'node:child_process';
import { paint, type Style } from './io.js';
import { formatMs, settlesWithin } from './timing.js';
import { signalWorker } from './process-group.js';
import {
  DEFAULT_RESTART_POLICY,
  type RestartPolicy,
  type SupervisorOptions,
  type WorkerSpec,
} from './supervisor-types.js';
import { exitText, spawnWorker } from './worker-process.js';

export { DEFAULT_RESTART_POLICY, type RestartPolicy, type SupervisorOptions, type WorkerSpec };

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
  /** The worker said hello to the control plane since it was (re)spawned. */
  connected: boolean;
  /** What to do when the process exits: restart on crash (default), respawn now, or drop the slot. */
  afterExit: 'restart' | 'respawn' | 'drop';
}

/** How long a retired command worker may take to exit after SIGTERM before its group is killed. */
const COMMAND_STOP_MS = 25_000;

const PREFIX_COLORS: Style[] = ['cyan', 'magenta', 'green', 'yellow', 'blue'];

/**
 * Runs worker processes (`node --import tsx <file>`), prefixes each output line with `[<endpoint>/<workerId>]`,
 * and restarts a worker that exits, with exponential backoff; after `maxImmediateCrashes` crashes in a row
 * within `minUptimeMs` of starting, it gives up on that worker and says so.
 */
export class WorkerSupervisor {
  readonly #opts: SupervisorOptions;
  readonly #policy: RestartPolicy;
  readonly #slots: Slot[] = [];
  readonly #endpoints: string[] = [];
  #stopping = false;

  constructor(specs: readonly WorkerSpec[], opts: SupervisorOptions) {
    this.#opts = opts;
    this.#policy = { ...DEFAULT_RESTART_POLICY, ...opts.restart };
    for (const spec of specs) this.#slots.push(this.#slot(spec));
  }

  #slot(spec: WorkerSpec): Slot {
    if (!this.#endpoints.includes(spec.endpointId)) this.#endpoints.push(spec.endpointId);
    const color = PREFIX_COLORS[this.#endpoints.indexOf(spec.endpointId) % PREFIX_COLORS.length] ?? 'cyan';
    return {
      spec,
      prefix: paint(this.#opts.color)(color, `[${spec.endpointId}/${spec.workerId}]`),
      child: undefined,
      startedAt: 0,
      crashesInARow: 0,
      restarts: 0,
      timer: undefined,
      gaveUp: false,
      exited: Promise.resolve(),
      connected: false,
      afterExit: 'restart',
    };
  }

  /** Spawns every worker. */
  start(): void {
    for (const slot of this.#slots) this.#spawn(slot);
  }

  /** Starts one more worker (scale up). Its id must not be in use. */
  add(spec: WorkerSpec): void {
    if (this.#stopping) return;
    if (this.#slots.some((s) => s.spec.workerId === spec.workerId))
      throw new Error(`worker id ${spec.workerId} is already in use`);
    const slot = this.#slot(spec);
    this.#slots.push(slot);
    this.#spawn(slot);
  }

  /** Stops a worker for good with SIGTERM (it drains its jobs first): scale down. Resolves once it exited. */
  retire(workerId: string): Promise<void> {
    const slot = this.#find(workerId);
    if (!slot) return Promise.resolve();
    slot.afterExit = 'drop';
    clearTimeout(slot.timer);
    if (!this.#alive(slot)) {
      this.#drop(slot);
      return Promise.resolve();
    }
    signalWorker(slot.child, slot.spec.command !== undefined, 'SIGTERM');
    // runpod-python exits on SIGTERM only once its held polls return (up to 20 s): do not wait past that.
    if (slot.spec.command) {
      const timer = setTimeout(
        () => signalWorker(slot.child, slot.spec.command !== undefined, 'SIGKILL'),
        COMMAND_STOP_MS,
      );
      void slot.exited.then(() => clearTimeout(timer));
    }
    return slot.exited;
  }

  /**
   * Hot reload: kills the worker at once (SIGKILL; the control plane requeues its running jobs when the same
   * worker id reconnects without them) and starts it again, with a clean crash count.
   */
  respawn(workerId: string): void {
    const slot = this.#find(workerId);
    if (!slot || this.#stopping) return;
    slot.crashesInARow = 0;
    slot.gaveUp = false;
    clearTimeout(slot.timer);
    slot.timer = undefined;
    if (this.#alive(slot)) {
      slot.afterExit = 'respawn';
      signalWorker(slot.child, slot.spec.command !== undefined, 'SIGKILL');
    } else this.#spawn(slot);
  }

  /** Records that the worker reached the control plane (from then on, an exit is a crash, not a load failure). */
  markConnected(workerId: string): void {
    const slot = this.#find(workerId);
    if (slot && this.#alive(slot)) slot.connected = true;
  }

  /** Worker ids of an endpoint that have a slot: running, starting, or waiting to restart. */
  workerIds(endpointId: string): string[] {
    return this.#slots
      .filter((s) => s.spec.endpointId === endpointId && !s.gaveUp && s.afterExit !== 'drop')
      .map((s) => s.spec.workerId);
  }

  /**
   * How the endpoint's workers are starting: some process not yet connected (`starting`), or one crashing again
   * and again since it last ran for `minUptimeMs` (`crashLoop`: two or more crashes in a row, not given up on, not
   * up long enough to count as running).
   */
  startState(endpointId: string): { starting: boolean; crashLoop: boolean } {
    const now = Date.now();
    let starting = false;
    let crashLoop = false;
    for (const s of this.#slots) {
      if (s.spec.endpointId !== endpointId || s.gaveUp || s.afterExit === 'drop') continue;
      if (!s.connected) starting = true;
      if (s.crashesInARow >= 2 && (!this.#alive(s) || now - s.startedAt < this.#policy.minUptimeMs)) crashLoop = true;
    }
    return { starting, crashLoop };
  }

  #find(workerId: string): Slot | undefined {
    return this.#slots.find((s) => s.spec.workerId === workerId);
  }

  #alive(slot: Slot): boolean {
    return slot.child !== undefined && slot.child.exitCode === null && slot.child.signalCode === null;
  }

  #drop(slot: Slot): void {
    const i = this.#slots.indexOf(slot);
    if (i >= 0) this.#slots.splice(i, 1);
  }

  /** Process ids of the running workers, by worker id. */
  pids(): Map<string, number> {
    const out = new Map<string, number>();
    for (const s of this.#slots)
      if (s.child?.pid !== undefined && s.child.exitCode === null && s.child.signalCode === null)
        out.set(s.spec.workerId, s.child.pid);
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
    for (const s of live) signalWorker(s.child, s.spec.command !== undefined, 'SIGTERM');
    const all = Promise.all(live.map((s) => s.exited));
    if (await settlesWithin(all, timeoutMs)) return;
    for (const s of live) {
      if (s.child && s.child.exitCode === null && s.child.signalCode === null) {
        this.#opts.logger.warn(
          `${s.spec.endpointId}/${s.spec.workerId} did not exit within ${timeoutMs} ms of SIGTERM; killing it`,
        );
        signalWorker(s.child, s.spec.command !== undefined, 'SIGKILL');
      }
    }
    await settlesWithin(all, 2_000);
  }

  /** SIGKILL every worker now (second Ctrl-C). */
  killAll(): void {
    this.beginShutdown();
    for (const s of this.#slots)
      if (s.child && s.child.exitCode === null) signalWorker(s.child, s.spec.command !== undefined, 'SIGKILL');
  }

  #spawn(slot: Slot): void {
    slot.startedAt = Date.now();
    slot.connected = false;
    slot.afterExit = 'restart';
    let done!: () => void;
    slot.exited = new Promise<void>((r) => (done = r));
    slot.child = spawnWorker(slot.spec, { ...this.#opts, prefix: slot.prefix }, (code, signal, spawnError) => {
      done();
      this.#onExit(slot, code, signal, spawnError);
    });
  }

  #onExit(slot: Slot, code: number | null, signal: NodeJS.Signals | null, spawnError?: Error): void {
    const { spec } = slot;
    const how = exitText(code, signal, spawnError);
    if (this.#stopping || slot.afterExit === 'drop') {
      this.#opts.stdout.write(`${slot.prefix} worker stopped\n`);
      if (!this.#stopping) this.#drop(slot);
      return;
    }
    if (slot.afterExit === 'respawn') {
      this.#spawn(slot);
      return;
    }
    if (!slot.connected && this.#opts.onLoadFailure) {
      this.#drop(slot);
      this.#opts.onLoadFailure(spec, how);
      return;
    }
    const uptime = Date.now() - slot.startedAt;
    slot.crashesInARow = uptime < this.#policy.minUptimeMs ? slot.crashesInARow + 1 : 1;
    const { logger } = this.#opts;
    const name = `${spec.endpointId}/${spec.workerId}`;
    if (slot.crashesInARow >= this.#policy.maxImmediateCrashes) {
      slot.gaveUp = true;
      this.#drop(slot);
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
