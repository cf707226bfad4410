import { bucketOf, TIME_BUCKETS_MS } from '../metrics/histogram.js';
import { bucketQuantile } from '../metrics/quantile.js';

/** Width of one slot, ms. */
export const SLOT_MS = 5_000;
/** Slots kept: one hour. */
export const SLOTS = 720;
/** Worker states charted, in order (`starting`: initializing; `draining`: throttled in /health). */
export const WORKER_STATES = ['idle', 'running', 'starting', 'draining', 'unhealthy'] as const;
const NB = TIME_BUCKETS_MS.length + 1;
const NW = WORKER_STATES.length;

export type WorkerCounts = Record<(typeof WORKER_STATES)[number], number>;

/**
 * One endpoint's window as columns (one entry per slot, oldest first). `null`: nothing recorded in that slot (before
 * the server started, or a slot without a sample); percentiles are also `null` in a slot where no job finished.
 */
export interface RingWindow {
  /** Slot start times, epoch ms. */
  t: number[];
  completed: (number | null)[];
  failed: (number | null)[];
  coldStarts: (number | null)[];
  queue: (number | null)[];
  workers: Record<(typeof WORKER_STATES)[number], (number | null)[]>;
  delayP50: (number | null)[];
  delayP95: (number | null)[];
  execP50: (number | null)[];
  execP95: (number | null)[];
  /** Over the whole window: sums, and percentiles of every job in it (ms). */
  totals: {
    completed: number;
    failed: number;
    coldStarts: number;
    delayP50: number | null;
    delayP95: number | null;
    execP50: number | null;
    execP95: number | null;
  };
}

/**
 * A fixed-size ring of 5 s slots over the last hour for one endpoint (about 150 KB, allocated once): job counts,
 * cold starts, sampled queue depth and workers, and per-slot bucket counts of delay and execution times (the
 * buckets of `/metrics`, so percentiles are estimated the same way). A slot is cleared when time comes round to it
 * again. Every write is O(1) or O(buckets) with no allocation.
 */
export class EndpointRing {
  private readonly slot = new Float64Array(SLOTS).fill(-1);
  private readonly completed = new Float64Array(SLOTS);
  private readonly failed = new Float64Array(SLOTS);
  private readonly cold = new Float64Array(SLOTS);
  private readonly queue = new Float64Array(SLOTS).fill(Number.NaN);
  private readonly workers = new Float64Array(SLOTS * NW).fill(Number.NaN);
  private readonly delay = new Uint32Array(SLOTS * NB);
  private readonly exec = new Uint32Array(SLOTS * NB);

  /** The row of time `t`, cleared if it held an older slot. */
  private row(t: number): number {
    const k = Math.floor(t / SLOT_MS);
    const i = k % SLOTS;
    if (this.slot[i] !== k) {
      this.slot[i] = k;
      this.completed[i] = this.failed[i] = this.cold[i] = 0;
      this.queue[i] = Number.NaN;
      this.workers.fill(Number.NaN, i * NW, (i + 1) * NW);
      this.delay.fill(0, i * NB, (i + 1) * NB);
      this.exec.fill(0, i * NB, (i + 1) * NB);
    }
    return i;
  }

  /** Jobs that became COMPLETED / FAILED since the last sample (deltas of the stored counters). */
  addDone(t: number, completed: number, failed: number): void {
    const i = this.row(t);
    this.completed[i]! += completed;
    this.failed[i]! += failed;
  }

  coldStart(t: number): void {
    this.cold[this.row(t)]!++;
  }

  /** A finished job's delay and execution times, ms (execution undefined: it never ran). */
  times(t: number, delayMs: number, execMs: number | undefined): void {
    const i = this.row(t);
    this.delay[i * NB + bucketOf(TIME_BUCKETS_MS, delayMs)]!++;
    if (execMs !== undefined) this.exec[i * NB + bucketOf(TIME_BUCKETS_MS, execMs)]!++;
  }

  /** A load-balancing request's time, ms (charted as execution; it has no queue delay of its own). */
  latency(t: number, ms: number): void {
    this.exec[this.row(t) * NB + bucketOf(TIME_BUCKETS_MS, ms)]!++;
  }

  /** The queue depth and workers now (the last sample of a slot wins). */
  gauges(t: number, queue: number, workers: WorkerCounts): void {
    const i = this.row(t);
    this.queue[i] = queue;
    for (let s = 0; s < NW; s++) this.workers[i * NW + s] = workers[WORKER_STATES[s]!];
  }

  /** The `slots` slots ending with the one of `now`, oldest first. */
  window(now: number, slots: number): RingWindow {
    const last = Math.floor(now / SLOT_MS);
    const w: RingWindow = {
      t: [],
      completed: [],
      failed: [],
      coldStarts: [],
      queue: [],
      workers: { idle: [], running: [], starting: [], draining: [], unhealthy: [] },
      delayP50: [],
      delayP95: [],
      execP50: [],
      execP95: [],
      totals: { completed: 0, failed: 0, coldStarts: 0, delayP50: null, delayP95: null, execP50: null, execP95: null },
    };
    const delaySum = new Float64Array(NB);
    const execSum = new Float64Array(NB);
    const q = (p: number, counts: ArrayLike<number>, offset: number) =>
      round(bucketQuantile(p, TIME_BUCKETS_MS, counts, offset));
    for (let k = last - slots + 1; k <= last; k++) {
      const i = ((k % SLOTS) + SLOTS) % SLOTS;
      const live = this.slot[i] === k;
      w.t.push(k * SLOT_MS);
      w.completed.push(live ? this.completed[i]! : null);
      w.failed.push(live ? this.failed[i]! : null);
      w.coldStarts.push(live ? this.cold[i]! : null);
      w.queue.push(live && !Number.isNaN(this.queue[i]) ? this.queue[i]! : null);
      WORKER_STATES.forEach((s, j) => {
        const v = this.workers[i * NW + j]!;
        w.workers[s].push(live && !Number.isNaN(v) ? v : null);
      });
      w.delayP50.push(live ? q(0.5, this.delay, i * NB) : null);
      w.delayP95.push(live ? q(0.95, this.delay, i * NB) : null);
      w.execP50.push(live ? q(0.5, this.exec, i * NB) : null);
      w.execP95.push(live ? q(0.95, this.exec, i * NB) : null);
      if (!live) continue;
      w.totals.completed += this.completed[i]!;
      w.totals.failed += this.failed[i]!;
      w.totals.coldStarts += this.cold[i]!;
      for (let b = 0; b < NB; b++) {
        delaySum[b]! += this.delay[i * NB + b]!;
        execSum[b]! += this.exec[i * NB + b]!;
      }
    }
    w.totals.delayP50 = q(0.5, delaySum, 0);
    w.totals.delayP95 = q(0.95, delaySum, 0);
    w.totals.execP50 = q(0.5, execSum, 0);
    w.totals.execP95 = q(0.95, execSum, 0);
    return w;
  }
}

const round = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);
