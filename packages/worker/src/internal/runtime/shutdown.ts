import type { Logger } from '../../logger.js';
import type { WorkerMessage } from '@berth/protocol';
import type { JobTable } from './job-table.js';
import type { RuntimeExit } from './runtime-types.js';
import { raceTimeout } from './waiters.js';

/** What stopping needs from the runtime. */
export interface ShutdownDeps {
  table: JobTable;
  log: Logger;
  send: (msg: WorkerMessage) => boolean;
  /** Closes the connection for good; `hard` drops the socket without a close handshake. */
  closeConnection: (options: { hard: boolean }) => Promise<void>;
  /** Ends a server drain in progress without reconnecting. */
  endServerDrain: () => void;
  /** Drops queued jobs not yet started. */
  clearQueue: () => void;
  drainTimeoutMs: number;
  abortGraceMs: number;
}

/**
 * How the runtime ends: a graceful `shutdown()` (announce `draining`, let running jobs finish until the timeout,
 * then hand the rest back), or an immediate `stop()` (fatal error, `close()`). `done` resolves with the exit once.
 */
export class Shutdown {
  /** Set by `shutdown()`: the worker takes no new work and announces no concurrency change. */
  draining = false;
  private stoppedWith: RuntimeExit | undefined;
  private shutdownPromise: Promise<RuntimeExit> | undefined;
  private forceShutdown: (() => void) | undefined;
  private resolveDone!: (exit: RuntimeExit) => void;
  readonly done = new Promise<RuntimeExit>((resolve) => (this.resolveDone = resolve));

  constructor(private readonly deps: ShutdownDeps) {}

  get stopped(): boolean {
    return this.stoppedWith !== undefined;
  }

  /** Graceful stop; a second call skips the wait for running jobs. */
  shutdown(options: { timeoutMs?: number } = {}): Promise<RuntimeExit> {
    if (this.stoppedWith) return Promise.resolve(this.stoppedWith);
    if (this.shutdownPromise) {
      this.forceShutdown?.();
      return this.shutdownPromise;
    }
    this.shutdownPromise = this.drainAndStop(options.timeoutMs ?? this.deps.drainTimeoutMs);
    return this.shutdownPromise;
  }

  /** Immediate stop: aborts every handler and closes the connection without reporting them. */
  async stop(exit: RuntimeExit, options: { hard: boolean }): Promise<RuntimeExit> {
    if (this.stoppedWith) return this.stoppedWith;
    this.stoppedWith = exit;
    this.deps.endServerDrain();
    this.deps.clearQueue();
    for (const entry of this.deps.table.values())
      if (!entry.aborter.aborted) entry.aborter.abort(new Error('the worker stopped'));
    await this.deps.closeConnection(options);
    this.deps.table.clearWaiters();
    this.resolveDone(exit);
    return exit;
  }

  private async drainAndStop(timeoutMs: number): Promise<RuntimeExit> {
    const { table, log } = this.deps;
    this.draining = true;
    this.deps.endServerDrain();
    const forced = new Promise<void>((resolve) => (this.forceShutdown = resolve));
    this.deps.send({ type: 'draining' });
    log.info('draining: finishing running jobs before exit', { active: table.active, timeoutMs });
    await raceTimeout(Promise.race([table.untilIdle(), forced]), timeoutMs);
    if (table.active > 0) {
      // Handed back at once (requeued by the control plane), not after the handlers return: the platform's
      // SIGKILL may be close. Handlers see their AbortSignal; the process exits once the results are acked.
      log.warn('drain deadline reached; handing running jobs back to the queue', { active: table.active });
      for (const entry of table.values()) if (entry.state !== 'finished') entry.abandon('the worker is shutting down');
      table.sweep();
    }
    await raceTimeout(table.untilEmpty(), this.deps.abortGraceMs);
    if (table.size > 0) log.warn('exiting with job results the control plane did not receive', { jobs: table.size });
    return this.stop({ code: 0, reason: 'drained' }, { hard: false });
  }
}
