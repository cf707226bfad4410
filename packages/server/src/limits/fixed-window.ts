/**
 * Counters in fixed windows (`[k * windowMs, (k + 1) * windowMs)` of the clock): one count per key per window.
 * Memory stays bounded: when the window rolls over, every count of the previous window is dropped at once, so
 * the map never holds more than the keys seen in one window (and callers' keys are authenticated key x endpoint
 * x operation, all bounded sets).
 */
export class FixedWindowCounter {
  private window = -1;
  private counts = new Map<string, number>();

  constructor(readonly windowMs: number) {}

  /**
   * Counts one hit on `key` at `now` unless the key already has `limit` hits in this window. Answers whether the
   * hit was allowed and, when not, the seconds until the window ends (for `Retry-After`, at least 1).
   */
  hit(key: string, limit: number, now: number): { ok: true } | { ok: false; retryAfterSec: number } {
    const w = Math.floor(now / this.windowMs);
    if (w !== this.window) {
      this.window = w;
      this.counts = new Map();
    }
    const n = this.counts.get(key) ?? 0;
    if (n >= limit) return { ok: false, retryAfterSec: Math.max(1, Math.ceil(((w + 1) * this.windowMs - now) / 1000)) };
    this.counts.set(key, n + 1);
    return { ok: true };
  }

  /** Keys counted in the current window (for tests and metrics). */
  get size(): number {
    return this.counts.size;
  }
}
