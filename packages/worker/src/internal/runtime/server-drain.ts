import type { Logger } from '../../logger.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

/** What a server drain needs from the runtime. */
export interface ServerDrainDeps {
  log: Logger;
  activeJobs: () => number;
  /** Closes the socket so the worker reconnects (running jobs keep running). */
  recycle: (reason: string) => void;
}

/**
 * A drain announced by the control plane (it is restarting): the worker finishes its running jobs, then closes the
 * socket and reconnects (to the new instance), at the latest at the drain deadline.
 */
export class ServerDrain {
  private draining = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: ServerDrainDeps) {}

  begin(deadline: number): void {
    this.draining = true;
    this.deps.log.info('the control plane is draining; finishing running jobs, then reconnecting', {
      active: this.deps.activeJobs(),
      deadline: new Date(deadline).toISOString(),
    });
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => this.end({ recycle: true }),
      Math.min(MAX_TIMER_MS, Math.max(0, deadline - Date.now())),
    );
    this.jobFinished();
  }

  /** Call when a job finished: the last one ends the drain. */
  jobFinished(): void {
    if (this.draining && this.deps.activeJobs() === 0) this.end({ recycle: true });
  }

  /** Ends the drain (a new `welcome`, a local shutdown, or the last job done); `recycle` reconnects. */
  end(options: { recycle: boolean }): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.draining) return;
    this.draining = false;
    if (options.recycle) this.deps.recycle('control plane draining');
  }
}
