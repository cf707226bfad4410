import type { EndpointCounts } from '../types.js';
import type { Run } from './pg-pools.js';
import { SQL } from './statements.js';

interface Live {
  inQueue: number;
  inProgress: number;
  /** Reusable until then (ms, on `now`). */
  until: number;
}

/** Queued plus running jobs from which a count may be reused. */
const REUSE_FROM_JOBS = 10_000;
/** A count that took `ms` is reused for up to this many times `ms`. */
const REUSE_FACTOR = 10;

/**
 * An endpoint's counts (`/health`, `/metrics`, the catalog). The done counters (completed, failed, retried) are read
 * from `endpoint_stats` every time; the queued and running counts are `count(*)` over partial indexes, whose cost
 * grows with the queue (16 ms at 100,000 queued). A count of 10,000 jobs or more that took `ms` is reused for up
 * to 10 x `ms`, so clients polling `/health` on every replica cannot keep PostgreSQL busy counting a deep queue (at
 * most about a tenth of one connection's time per endpoint and replica), and such a count is off by what changed
 * in that window (160 ms at 100,000 queued); a smaller queue is always counted afresh, exactly. Concurrent calls
 * share one statement.
 */
export class LiveCounts {
  private readonly live = new Map<string, Live>();
  private readonly inFlight = new Map<string, Promise<EndpointCounts>>();

  constructor(
    private readonly run: Run,
    private readonly now: () => number = () => performance.now(),
  ) {}

  counts(endpointId: string): Promise<EndpointCounts> {
    const pending = this.inFlight.get(endpointId);
    if (pending) return pending;
    const p = this.read(endpointId).finally(() => this.inFlight.delete(endpointId));
    this.inFlight.set(endpointId, p);
    return p;
  }

  private async read(endpointId: string): Promise<EndpointCounts> {
    const cached = this.live.get(endpointId);
    const t0 = this.now();
    if (cached && t0 < cached.until) {
      const [d] = await this.run<DoneRow>(SQL.countsDone, [endpointId]);
      return { ...done(d), inQueue: cached.inQueue, inProgress: cached.inProgress };
    }
    const [s] = await this.run<DoneRow & { in_queue: number; in_progress: number }>(SQL.counts, [endpointId]);
    const ms = this.now() - t0;
    const inQueue = s?.in_queue ?? 0;
    const inProgress = s?.in_progress ?? 0;
    if (inQueue + inProgress >= REUSE_FROM_JOBS)
      this.live.set(endpointId, { inQueue, inProgress, until: t0 + ms * REUSE_FACTOR });
    else this.live.delete(endpointId);
    return { ...done(s), inQueue, inProgress };
  }
}

interface DoneRow {
  completed: number | null;
  failed: number | null;
  retried: number | null;
}

const done = (d: DoneRow | undefined) => ({
  completed: d?.completed ?? 0,
  failed: d?.failed ?? 0,
  retried: d?.retried ?? 0,
});
