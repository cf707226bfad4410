import type { Database } from 'better-sqlite3';
import { coalescingPrefix, mergedOutputBody, newWebhookDelivery } from '../webhook-delivery.js';
import type { JobRecord, WebhookAttempt, WebhookDelivery } from '../types.js';
import { toDelivery as fromRow, type DeliveryRow } from '../job-row.js';

/**
 * The SQLite webhook outbox (table `webhook_deliveries`). Every method runs inside the caller's transaction
 * (`SqliteStore` calls them from its `tx.write`/`tx.read`), so `added()` commits with the terminal state.
 * Deliveries have no foreign key to `jobs`: a pending one outlives its job (its body is a snapshot).
 */
export class SqliteWebhookOutbox {
  private readonly st;

  constructor(db: Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS webhook_deliveries (
        id TEXT PRIMARY KEY,
        job_id TEXT NOT NULL,
        endpoint_id TEXT NOT NULL,
        url TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        next_attempt_at INTEGER,
        attempts TEXT NOT NULL DEFAULT '[]'
      );
      CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
      CREATE INDEX IF NOT EXISTS webhook_deliveries_job ON webhook_deliveries (job_id);
      CREATE INDEX IF NOT EXISTS webhook_deliveries_job_pending ON webhook_deliveries (job_id, created_at) WHERE next_attempt_at IS NOT NULL;
    `);
    this.st = {
      insert: db.prepare(
        'INSERT OR IGNORE INTO webhook_deliveries (id, job_id, endpoint_id, url, body, created_at, next_attempt_at) VALUES (@id, @jobId, @endpointId, @url, @body, @createdAt, @nextAttemptAt)',
      ),
      // Each the oldest pending delivery of its job: a job's later ones wait for it (they arrive in order).
      due: db.prepare<[number, number], DeliveryRow>(
        `SELECT * FROM webhook_deliveries w WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= ?
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries o WHERE o.job_id = w.job_id AND o.next_attempt_at IS NOT NULL AND o.created_at < w.created_at)
         ORDER BY next_attempt_at, created_at LIMIT ?`,
      ),
      replaced: db.prepare<[string, number, string, number], { id: string; body: string }>(
        `SELECT id, body FROM webhook_deliveries WHERE job_id = ? AND substr(id, 1, ?) = ? AND attempts = '[]'
         AND next_attempt_at IS NOT NULL AND next_attempt_at <= ? ORDER BY created_at, id`,
      ),
      drop: db.prepare('DELETE FROM webhook_deliveries WHERE id = ?'),
      lease: db.prepare('UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ?'),
      get: db.prepare<[string], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = ?'),
      record: db.prepare('UPDATE webhook_deliveries SET attempts = ?, next_attempt_at = ? WHERE id = ?'),
      dropIfJobGone: db.prepare(
        'DELETE FROM webhook_deliveries WHERE id = ? AND next_attempt_at IS NULL AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = webhook_deliveries.job_id)',
      ),
      forJob: db.prepare<[string], DeliveryRow>(
        'SELECT * FROM webhook_deliveries WHERE job_id = ? ORDER BY created_at, id',
      ),
      dropFinished: db.prepare('DELETE FROM webhook_deliveries WHERE job_id = ? AND next_attempt_at IS NULL'),
    };
  }

  /** In the terminal transition of `job`: its pending delivery, when it has a webhook. */
  added(job: JobRecord, now: number): void {
    const d = newWebhookDelivery(job, now);
    if (d) this.enqueue(d);
  }

  /**
   * Stores a delivery (an event's, or a terminal one); an id already stored is left as it is. A `progress` or
   * `output` replaces the job's ones of the same event never attempted nor claimed (an `output` takes their chunks).
   */
  enqueue(d: WebhookDelivery): void {
    const prefix = coalescingPrefix(d);
    const older = prefix ? this.st.replaced.all(d.jobId, prefix.length, prefix, d.createdAt) : [];
    for (const o of older) this.st.drop.run(o.id);
    const body =
      older.length > 0 && prefix?.endsWith('_output_')
        ? mergedOutputBody(
            older.map((o) => o.body),
            d.body,
          )
        : d.body;
    this.st.insert.run({
      id: d.id,
      jobId: d.jobId,
      endpointId: d.endpointId,
      url: d.url,
      body,
      createdAt: d.createdAt,
      nextAttemptAt: d.nextAttemptAt,
    });
  }

  claim(now: number, limit: number, leaseUntil: number): WebhookDelivery[] {
    const rows = this.st.due.all(now, limit);
    for (const r of rows) this.st.lease.run(leaseUntil, r.id);
    return rows.map(fromRow);
  }

  record(id: string, attempt: WebhookAttempt, nextAttemptAt: number | null): boolean {
    const r = this.st.get.get(id);
    if (!r) return false;
    const attempts = [...fromRow(r).attempts, attempt];
    this.st.record.run(JSON.stringify(attempts), nextAttemptAt, id);
    if (nextAttemptAt === null) this.st.dropIfJobGone.run(id);
    return true;
  }

  forJob(jobId: string): WebhookDelivery[] {
    return this.st.forJob.all(jobId).map(fromRow);
  }

  /** The job was deleted: its finished deliveries go too; pending ones stay until they finish. */
  jobDeleted(jobId: string): void {
    this.st.dropFinished.run(jobId);
  }
}
