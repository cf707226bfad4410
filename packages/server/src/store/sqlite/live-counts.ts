import type { JobStatus } from '@berth/protocol';
import type { Statements } from './statements.js';

type Live = Record<'IN_QUEUE' | 'IN_PROGRESS', number>;

/**
 * What the SQLite store keeps in memory: queued and running jobs per endpoint (health, `queueDepth`, and a claim
 * that skips an empty queue without a query) and the next queue position. Rebuilt from the database on open and
 * after a rolled-back batch; kept in step by every write.
 */
export class LiveCounts {
  private live = new Map<string, Live>();
  /** Next `queue_seq`: FIFO order across restarts. */
  nextSeq = 1;

  constructor(private readonly st: Statements) {
    this.rebuild();
  }

  rebuild(): void {
    this.live = new Map();
    for (const r of this.st.liveCounts.all() as { endpoint_id: string; status: string; n: number }[]) {
      this.of(r.endpoint_id)[r.status as keyof Live] = r.n;
    }
    this.nextSeq = ((this.st.maxSeq.get() as { m: number | null }).m ?? 0) + 1;
  }

  private of(endpointId: string): Live {
    let l = this.live.get(endpointId);
    if (!l) this.live.set(endpointId, (l = { IN_QUEUE: 0, IN_PROGRESS: 0 }));
    return l;
  }

  /** A job of the endpoint moved from one status to another (`undefined`: inserted or deleted). */
  moved(endpointId: string, from: JobStatus | undefined, to: JobStatus | undefined): void {
    const l = this.of(endpointId);
    if (from === 'IN_QUEUE' || from === 'IN_PROGRESS') l[from]--;
    if (to === 'IN_QUEUE' || to === 'IN_PROGRESS') l[to]++;
  }

  /** `n` queued jobs of the endpoint were removed (purge). */
  purged(endpointId: string, n: number): void {
    this.of(endpointId).IN_QUEUE -= n;
  }

  queued(endpointId: string): number {
    return this.live.get(endpointId)?.IN_QUEUE ?? 0;
  }

  running(endpointId: string): number {
    return this.live.get(endpointId)?.IN_PROGRESS ?? 0;
  }

  /** Endpoints with at least one queued job. */
  queuedEndpoints(): string[] {
    const out: string[] = [];
    for (const [id, l] of this.live) if (l.IN_QUEUE > 0) out.push(id);
    return out;
  }

  /** Totals over every endpoint. */
  totals(): { queued: number; running: number } {
    let queued = 0;
    let running = 0;
    for (const l of this.live.values()) {
      queued += l.IN_QUEUE;
      running += l.IN_PROGRESS;
    }
    return { queued, running };
  }
}
