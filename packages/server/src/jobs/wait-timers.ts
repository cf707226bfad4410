/**
 * One timer for many waits (each `/runsync`, `/status-sync` or stream wait used to set and clear its own
 * `setTimeout`). Deadlines are rounded up to the next whole millisecond of `performance.now()`; waits ending in
 * the same millisecond share a bucket, and a min-heap orders the buckets. Cancelling is O(1): the bucket key
 * stays in the heap until it comes up, and is skipped then. Only the earliest live bucket has a Node timer.
 */
export class WaitTimers {
  private readonly buckets = new Map<number, Set<() => void>>();
  /** Bucket keys (ms); some may be cancelled already (no bucket in `buckets`). */
  private readonly heap: number[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  /** Calls `fn` once, `delayMs` from now (not sooner), unless the returned function is called first. */
  add(delayMs: number, fn: () => void): () => void {
    const at = Math.ceil(performance.now() + Math.max(0, delayMs));
    let bucket = this.buckets.get(at);
    if (!bucket) {
      this.buckets.set(at, (bucket = new Set()));
      this.push(at);
    }
    bucket.add(fn);
    if (at < this.timerAt) this.arm(at);
    const b = bucket;
    return () => {
      if (b.delete(fn) && b.size === 0 && this.buckets.get(at) === b) this.buckets.delete(at);
    };
  }

  /** Number of pending waits (for tests). */
  get size(): number {
    let n = 0;
    for (const b of this.buckets.values()) n += b.size;
    return n;
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - performance.now()));
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    const due: (() => void)[] = [];
    while (this.heap.length > 0 && this.heap[0]! <= now) {
      const at = this.pop();
      const bucket = this.buckets.get(at);
      if (!bucket) continue;
      this.buckets.delete(at);
      for (const fn of bucket) due.push(fn);
    }
    while (this.heap.length > 0 && !this.buckets.has(this.heap[0]!)) this.pop(); // cancelled buckets
    if (this.heap.length > 0) this.arm(this.heap[0]!);
    for (const fn of due) fn();
  }

  private push(at: number): void {
    const h = this.heap;
    let i = h.push(at) - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p]! <= at) break;
      h[i] = h[p]!;
      i = p;
    }
    h[i] = at;
  }

  private pop(): number {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= h.length) break;
        const c = l + 1 < h.length && h[l + 1]! < h[l]! ? l + 1 : l;
        if (h[c]! >= last) break;
        h[i] = h[c]!;
        i = c;
      }
      h[i] = last;
    }
    return top;
  }
}
