/** Upper bounds (ms) of the delay and execution time histograms. */
export const TIME_BUCKETS_MS = [
  5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000, 900_000,
];

/** Upper bounds of the batch-size histogram (jobs per batch). */
export const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/** A Prometheus histogram with fixed buckets: cumulative counts, sum and count. */
export class Histogram {
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly buckets: readonly number[] = TIME_BUCKETS_MS,
    /** Observed values are divided by it in the exposition: 1000 turns ms into seconds; 1 keeps counts as they are. */
    private readonly divisor = 1000,
  ) {
    this.counts = new Array<number>(buckets.length).fill(0);
  }

  observe(v: number): void {
    if (!Number.isFinite(v) || v < 0) return;
    this.sum += v;
    this.count++;
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]!) this.counts[i]!++;
  }

  /** Exposition lines for `name` with the given labels (`le` added per bucket). */
  lines(name: string, labels: string): string[] {
    const sep = labels ? `${labels},` : '';
    const out = this.buckets.map((b, i) => `${name}_bucket{${sep}le="${b / this.divisor}"} ${this.counts[i]}`);
    out.push(`${name}_bucket{${sep}le="+Inf"} ${this.count}`);
    out.push(`${name}_sum{${labels}} ${this.sum / this.divisor}`);
    out.push(`${name}_count{${labels}} ${this.count}`);
    return out;
  }
}
