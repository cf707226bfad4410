/**
 * One timer for the earliest known deadline, so ttl, executionTimeout, retention and leases fire on time rather
 * than up to one sweep interval late. It is never one timer per job: arming a later deadline than the one
 * pending does nothing, and the periodic sweep stays as the backstop (deadlines read back from a durable store).
 */
export class DeadlineAlarm {
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Infinity;

  constructor(
    private readonly now: () => number,
    private readonly fire: () => void,
  ) {}

  /** Makes sure a sweep runs at (or just after) epoch-ms `t`. */
  at(t: number): void {
    if (t >= this.armedAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = t;
    // setTimeout caps at 2^31-1 ms; a later deadline is re-armed by the periodic sweep anyway.
    const delay = Math.min(Math.max(0, t - this.now()), 2_147_483_647);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.armedAt = Infinity;
      this.fire();
    }, delay + 1);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Infinity;
  }
}
