import { Histogram } from './histogram.js';

/** What a cold start is timed until: the worker's first job handed to it, or its first job finished. */
export type ColdStartPhase = 'first_job_assigned' | 'first_job_done';

/** Upper bounds (ms) of the cold-start histogram: container starts take from a few hundred ms to minutes. */
const COLD_START_BUCKETS_MS = [250, 500, 750, 1_000, 1_500, 2_000, 3_000, 5_000, 10_000, 30_000, 60_000, 300_000];

/**
 * `berth_worker_cold_start_seconds{endpoint, until}`: time from a scaler creating a worker (container create) to
 * its first job assigned / done, by endpoint. Only a process that starts workers (`berth serve --scale`) has any.
 */
export class ColdStarts {
  readonly #byKey = new Map<string, Histogram>();

  observe(endpointId: string, phase: ColdStartPhase, ms: number): void {
    const key = `${endpointId}\u0000${phase}`;
    let h = this.#byKey.get(key);
    if (!h) this.#byKey.set(key, (h = new Histogram(COLD_START_BUCKETS_MS)));
    h.observe(ms);
  }

  /** Exposition lines (HELP and TYPE included) of the endpoints `shown`. */
  lines(shown: (endpointId: string) => boolean, esc: (v: string) => string): string[] {
    const name = 'berth_worker_cold_start_seconds';
    const out = [
      `# HELP ${name} Time from a scaler creating a worker (container create) to its first job assigned or done.`,
      `# TYPE ${name} histogram`,
    ];
    for (const [key, h] of [...this.#byKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const [ep, phase] = key.split('\u0000') as [string, ColdStartPhase];
      if (shown(ep)) out.push(...h.lines(name, `endpoint="${esc(ep)}",until="${phase}"`));
    }
    return out;
  }
}
