/** Upper bounds (ms) of the delay and execution time histograms. */
export const TIME_BUCKETS_MS = [
  5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000, 900_000,
];

/** Upper bounds of the batch-size histogram (jobs per batch). */
export const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/** Index of the first bucket whose upper bound is at least `v` (`buckets.length`: above every bound). O(buckets). */
export function bucketOf(buckets: readonly number[], v: number): number {
  let i = 0;
  while (i < buckets.length && v > buckets[i]!) i++;
  return i;
}

/**
 * A Prometheus histogram with fixed buckets. `observe` is O(buckets) and allocates nothing: it counts the value in
 * its own bucket; the cumulative counts are summed when rendered.
 */
export class Histogram {
  /** Per bucket (not cumulative); the last slot counts values above every bound. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly buckets: readonly number[] = TIME_BUCKETS_MS,
    /** Divides bounds and sum when rendered (1000: observed in ms, exposed in seconds). */
    private readonly divisor = 1000,
  ) {
    this.counts = new Float64Array(buckets.length + 1);
  }

  observe(v: number): void {
    if (!Number.isFinite(v) || v < 0) return;
    this.sum += v;
    this.count++;
    this.counts[bucketOf(this.buckets, v)]!++;
  }

  /** Exposition lines for `name` with the given labels (`le` added per bucket). */
  lines(name: string, labels: string): string[] {
    const sep = labels ? `${labels},` : '';
    let cumulative = 0;
    const out = this.buckets.map((b, i) => {
      cumulative += this.counts[i]!;
      return `${name}_bucket{${sep}le="${b / this.divisor}"} ${cumulative}`;
    });
    out.push(`${name}_bucket{${sep}le="+Inf"} ${this.count}`);
    const braced = labels ? `{${labels}}` : '';
    out.push(`${name}_sum${braced} ${this.sum / this.divisor}`);
    out.push(`${name}_count${braced} ${this.count}`);
    return out;
  }
}
