import type { Logger } from '@berth/protocol/log';

/** Replies to malformed frames per summary window, past which they are only counted. */
const MAX_ERROR_REPLIES = 100;
const SUMMARY_MS = 10_000;

/**
 * Per worker connection: a message rate limit (`perSecond`, bursts up to one second's worth) that delays
 * applying messages past it and pauses reading meanwhile (backpressure: nothing is dropped, the worker's frames
 * wait in TCP buffers), and one summarised warning per 10 s for malformed frames instead of one log line each.
 */
export class ConnectionGuard {
  /** Theoretical arrival time of the next message at the allowed rate (GCRA). */
  private tat = 0;
  private malformed = 0;
  private lastError = '';
  private summaryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly perSecond: number,
    private readonly logger: Logger,
    private readonly who: () => string | undefined,
  ) {}

  /** Counts one message: the `performance.now()` time before which it must not be applied, or 0 for now. */
  admit(now = performance.now()): number {
    this.tat = Math.max(this.tat, now) + 1000 / this.perSecond;
    const at = this.tat - 1000;
    return at > now ? at : 0;
  }

  /** Counts a malformed frame; true while it should still get an error reply. The first one is logged at once. */
  malformedFrame(error: string): boolean {
    this.malformed++;
    this.lastError = error;
    if (this.summaryTimer === undefined) {
      this.logger.warn('malformed worker message ignored', { workerId: this.who(), error });
      this.malformed = 0;
      this.summaryTimer = setTimeout(() => this.summarise(), SUMMARY_MS);
      this.summaryTimer.unref();
      return true;
    }
    return this.malformed <= MAX_ERROR_REPLIES;
  }

  private summarise(): void {
    this.summaryTimer = undefined;
    if (this.malformed === 0) return;
    this.logger.warn('malformed worker messages ignored', {
      workerId: this.who(),
      count: this.malformed,
      windowMs: SUMMARY_MS,
      lastError: this.lastError,
    });
    this.malformed = 0;
    this.summaryTimer = setTimeout(() => this.summarise(), SUMMARY_MS);
    this.summaryTimer.unref();
  }

  close(): void {
    if (this.summaryTimer !== undefined) clearTimeout(this.summaryTimer);
    if (this.malformed > 0)
      this.logger.warn('malformed worker messages ignored', {
        workerId: this.who(),
        count: this.malformed,
        lastError: this.lastError,
      });
    this.summaryTimer = undefined;
  }
}
