import { Histogram } from './histogram.js';

/** What a cold start is timed until: the worker's first job handed to it, or its first job finished. */
export type ColdStartPhase = 'first_job_assigned' | 'first_job_done';

/** Why a scaler could not start a worker. */
export type StartFailure = 'image_missing' | 'daemon_down' | 'exited_early' | 'create_failed';

/** Upper bounds (ms) of the cold-start histogram: container starts take from a few hundred ms to minutes. */
const COLD_START_BUCKETS_MS = [250, 500, 750, 1_000, 1_500, 2_000, 3_000, 5_000, 10_000, 30_000, 60_000, 300_000];

const byKey = <T>([a]: [string, T], [b]: [string, T]) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * What a scaler (`berth serve --scale docker`) reports, by endpoint: `berth_worker_cold_start_seconds{endpoint,
 * until}`, time from creating a worker (container create) to its first job assigned / done, and
 * `berth_worker_start_failures_total{endpoint, reason}`. A process that starts no workers has none.
 */
export class ScalerMetrics {
  readonly #coldStarts = new Map<string, Histogram>();
  readonly #failures = new Map<string, number>();

  coldStart(endpointId: string, phase: ColdStartPhase, ms: number): void {
    const key = `${endpointId}\u0000${phase}`;
    let h = this.#coldStarts.get(key);
    if (!h) this.#coldStarts.set(key, (h = new Histogram(COLD_START_BUCKETS_MS)));
    h.observe(ms);
  }

  startFailed(endpointId: string, reason: StartFailure): void {
    const key = `${endpointId}\u0000${reason}`;
    this.#failures.set(key, (this.#failures.get(key) ?? 0) + 1);
  }

  /** Exposition lines (HELP and TYPE included) of the endpoints `shown`. */
  lines(shown: (endpointId: string) => boolean, esc: (v: string) => string): string[] {
    const cold = 'berth_worker_cold_start_seconds';
    const failed = 'berth_worker_start_failures_total';
    const out = [
      `# HELP ${cold} Time from a scaler creating a worker (container create) to its first job assigned or done.`,
      `# TYPE ${cold} histogram`,
    ];
    for (const [key, h] of [...this.#coldStarts].sort(byKey)) {
      const [ep, phase] = key.split('\u0000') as [string, string];
      if (shown(ep)) out.push(...h.lines(cold, `endpoint="${esc(ep)}",until="${phase}"`));
    }
    out.push(
      `# HELP ${failed} Workers a scaler could not start, by endpoint and reason (image_missing, daemon_down, exited_early, create_failed).`,
      `# TYPE ${failed} counter`,
    );
    for (const [key, n] of [...this.#failures].sort(byKey)) {
      const [ep, reason] = key.split('\u0000') as [string, string];
      if (shown(ep)) out.push(`${failed}{endpoint="${esc(ep)}",reason="${reason}"} ${n}`);
    }
    return out;
  }
}
