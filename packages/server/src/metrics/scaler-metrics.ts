import type { Counter, HistogramFamily, Registry } from './registry.js';

/** What a cold start is timed until: the worker's first job handed to it, its first job finished, or (an HTTP worker) its first `/ping` 200. */
export type ColdStartPhase = 'first_job_assigned' | 'first_job_done' | 'ready';

/** Why a scaler could not start a worker. */
export type StartFailure = 'image_missing' | 'daemon_down' | 'exited_early' | 'create_failed';

/** Upper bounds (ms) of the cold-start histogram: container starts take from a few hundred ms to minutes. */
const COLD_START_BUCKETS_MS = [250, 500, 750, 1_000, 1_500, 2_000, 3_000, 5_000, 10_000, 30_000, 60_000, 300_000];

/**
 * What a scaler (`berth serve --scale docker`) reports, by endpoint: `berth_worker_cold_start_seconds{endpoint,
 * until}`, time from creating a worker (container create) to its first job assigned / done, and
 * `berth_worker_start_failures_total{endpoint, reason}`. Per replica: only the replica holding the scaling lease
 * starts workers.
 */
export class ScalerMetrics {
  readonly #coldStarts: HistogramFamily;
  readonly #failures: Counter;

  constructor(r: Registry) {
    this.#coldStarts = r.histogram(
      {
        name: 'berth_worker_cold_start_seconds',
        help: 'Time from a scaler creating a worker (container create) to its first job assigned or done.',
        labels: ['endpoint', 'until'],
        perReplica: true,
      },
      COLD_START_BUCKETS_MS,
      1000,
    );
    this.#failures = r.counter({
      name: 'berth_worker_start_failures_total',
      help: 'Workers a scaler could not start, by endpoint and reason (image_missing, daemon_down, exited_early, create_failed).',
      labels: ['endpoint', 'reason'],
      perReplica: true,
    });
  }

  coldStart(endpointId: string, phase: ColdStartPhase, ms: number): void {
    this.#coldStarts.labels(endpointId, phase).observe(ms);
  }

  startFailed(endpointId: string, reason: StartFailure): void {
    this.#failures.labels(endpointId, reason).inc();
  }
}
