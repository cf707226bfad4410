/**
 * runpod-python re-polls job-take at once after any answer but 204, 400 and 429 (thousands of times a second
 * while an error lasts), and waits 5 s after a 429. So a take that comes back within `gapMs` of a failed one is
 * answered 429 `rate_limited`: one error and one 429 every 5 s instead of a busy loop.
 */
export class RepollLimiter {
  private readonly failedAt = new Map<string, number>();

  constructor(private readonly gapMs = 1000) {}

  tooSoon(key: string, now: number): boolean {
    const t = this.failedAt.get(key);
    return t !== undefined && now - t < this.gapMs;
  }

  record(key: string, status: number, now: number): void {
    if (status === 200 || status === 204 || status === 429) {
      this.failedAt.delete(key);
      return;
    }
    if (this.failedAt.size >= 10_000) this.failedAt.clear();
    this.failedAt.set(key, now);
  }
}
