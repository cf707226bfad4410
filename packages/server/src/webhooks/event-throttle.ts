import type { Clock } from '../clock.js';

/** Runs `fn` in `ms` (real time by default; tests pass their own). */
export type Schedule = (fn: () => void, ms: number) => { cancel(): void };

export const realSchedule: Schedule = (fn, ms) => {
  const t = setTimeout(fn, ms);
  t.unref();
  return { cancel: () => clearTimeout(t) };
};

/**
 * At most one `send` per `intervalMs` (on `clock`), the last value always sent: a value pushed within the
 * interval after a send is held (merged with what is already held) and sent when the interval ends, or at once
 * by `flush()`. Replicate's rule for its `output` webhooks, used here for `progress` and `output`.
 */
export class EventThrottle<T> {
  private lastAt: number | undefined;
  private held: { value: T } | undefined;
  private timer: { cancel(): void } | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly clock: Clock,
    /** Combines what is held with a newer value (progress: the newer; output chunks: both, in order). */
    private readonly merge: (held: T | undefined, next: T) => T,
    /** `at`: the send time the interval counts from (a delivery's creation time: read again later, a process
     *  descheduled in between would show two sends closer than the interval). */
    private readonly send: (value: T, at: number) => void,
    private readonly schedule: Schedule = realSchedule,
  ) {}

  push(value: T): void {
    const now = this.clock.now();
    if (!this.timer && (this.lastAt === undefined || now - this.lastAt >= this.intervalMs)) {
      this.lastAt = now;
      this.send(value, now);
      return;
    }
    this.held = { value: this.merge(this.held?.value, value) };
    this.timer ??= this.schedule(() => this.fire(), Math.max(0, this.lastAt! + this.intervalMs - now));
  }

  /** Sends what is held now (the job is ending); nothing when nothing is held. */
  flush(): void {
    this.timer?.cancel();
    this.fire(false);
  }

  private fire(checkEarly = true): void {
    this.timer = undefined;
    const held = this.held;
    if (!held) return;
    // Node's timers count from the event loop's cached time, which can lag the clock: never send early.
    const left = this.lastAt! + this.intervalMs - this.clock.now();
    if (checkEarly && left > 0) {
      this.timer = this.schedule(() => this.fire(), left);
      return;
    }
    this.held = undefined;
    const at = this.clock.now();
    this.lastAt = at;
    this.send(held.value, at);
  }
}
