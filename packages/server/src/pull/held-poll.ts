import type { AbortLike } from '../core/abort.js';

/** How a held poll ended: answered with a value, held for its whole time, or dropped by the client. */
export type PollEnd<T> = { kind: 'answered'; value: T } | { kind: 'timeout' } | { kind: 'aborted' };

/**
 * One long-poll request a worker holds open: settles once, with a value (`answer`), after `holdMs`, or when
 * the client goes away. `wake` asks its owner to look again (a stop arrived); `retimer` sets an earlier
 * wake-up (a stop that may be offered again soon).
 */
export class HeldPoll<T> {
  readonly done: Promise<PollEnd<T>>;
  private settle!: (end: PollEnd<T>) => void;
  private settled = false;
  private readonly timer: NodeJS.Timeout;
  private wakeTimer: NodeJS.Timeout | undefined;
  private readonly onAbort = () => this.end({ kind: 'aborted' });

  constructor(
    holdMs: number,
    private readonly signal: AbortLike | undefined,
    private readonly onWake: () => void = () => {},
  ) {
    this.done = new Promise((r) => (this.settle = r));
    this.timer = setTimeout(() => this.end({ kind: 'timeout' }), holdMs);
    if (signal?.aborted) queueMicrotask(this.onAbort);
    else signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  get open(): boolean {
    return !this.settled;
  }

  answer(value: T): void {
    this.end({ kind: 'answered', value });
  }

  wake(): void {
    if (!this.settled) this.onWake();
  }

  /** Calls `wake` in `ms` (replacing an earlier such call). */
  wakeIn(ms: number): void {
    if (this.settled) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = setTimeout(() => this.wake(), Math.max(0, ms));
  }

  private end(e: PollEnd<T>): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.signal?.removeEventListener('abort', this.onAbort);
    this.settle(e);
  }
}
