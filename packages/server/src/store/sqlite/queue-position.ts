import type { Database, Statement } from 'better-sqlite3';

/**
 * `Store.queuePosition` on SQLite: the queued jobs of the job's endpoint ahead of it (smaller `queue_seq`), counted
 * on the `jobs_queue` index up to `cap`. Exact: one connection sees every committed write.
 */
export class SqliteQueuePositions {
  private readonly seq: Statement;
  private readonly ahead: Statement;

  constructor(db: Database) {
    this.seq = db.prepare(`SELECT endpoint_id, queue_seq FROM jobs WHERE id = ? AND status = 'IN_QUEUE'`);
    this.ahead = db
      .prepare(
        `SELECT count(*) FROM (SELECT 1 FROM jobs WHERE endpoint_id = ? AND status = 'IN_QUEUE' AND queue_seq < ? LIMIT ?)`,
      )
      .pluck();
  }

  of(id: string, cap: number): number | undefined {
    const r = this.seq.get(id) as { endpoint_id: string; queue_seq: number } | undefined;
    if (!r) return undefined;
    return this.ahead.get(r.endpoint_id, r.queue_seq, Math.max(0, cap)) as number;
  }
}
