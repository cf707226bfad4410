import type { Queryable } from './pg-pools.js';
import { coalescingPrefix, newWebhookDelivery } from '../webhook-delivery.js';
import type { JobRecord, WebhookAttempt, WebhookDelivery } from '../types.js';
import { toDelivery, type DeliveryRow } from './rows.js';

/**
 * The PostgreSQL webhook outbox (table `webhook_deliveries`). `added` and `jobDeleted` run on the caller's
 * connection inside its transaction, so a delivery commits with the terminal state. Claims lock with
 * `FOR UPDATE SKIP LOCKED`: senders on several replicas never take the same delivery while its lease runs.
 */
export const pgOutbox = {
  /** In the terminal transition of `job`: its pending delivery, when it has a webhook. */
  async added(c: Queryable, job: JobRecord, now: number): Promise<void> {
    const d = newWebhookDelivery(job, now);
    if (d) await pgOutbox.enqueue(c, d);
  },

  /**
   * Stores a delivery (an event's, or a terminal one); an id already stored is left as it is. A `progress` or
   * `output` replaces, in the same statement, the job's ones of the same event never attempted nor claimed (a
   * claim's lease moves `next_attempt_at` past the event's time; a concurrent claim holds the row's lock, and the
   * delete then sees its lease); an `output` takes their chunks first.
   */
  async enqueue(c: Queryable, d: WebhookDelivery): Promise<void> {
    const prefix = coalescingPrefix(d);
    if (prefix === undefined) {
      await c.query(
        `INSERT INTO webhook_deliveries (id, job_id, endpoint_id, url, body, created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (id) DO NOTHING`,
        [d.id, d.jobId, d.endpointId, d.url, d.body, d.createdAt, d.nextAttemptAt],
      );
      return;
    }
    await c.query(
      `WITH gone AS (
         DELETE FROM webhook_deliveries WHERE job_id = $2::text AND left(id, length($8::text)) = $8::text
           AND attempts = '[]'::jsonb AND next_attempt_at IS NOT NULL AND next_attempt_at <= $6::bigint
         RETURNING body, created_at, id
       ), chunks AS (
         SELECT coalesce(jsonb_agg(x.e ORDER BY g.created_at, g.id, x.ord), '[]'::jsonb) AS older
         FROM gone g CROSS JOIN LATERAL jsonb_array_elements(coalesce(g.body::jsonb -> 'stream', '[]'::jsonb)) WITH ORDINALITY AS x(e, ord)
       )
       INSERT INTO webhook_deliveries (id, job_id, endpoint_id, url, body, created_at, next_attempt_at)
       SELECT $1::text, $2::text, $3::text, $4::text,
         CASE WHEN $9::boolean AND older <> '[]'::jsonb
           THEN jsonb_set($5::text::jsonb, '{stream}', older || coalesce($5::text::jsonb -> 'stream', '[]'::jsonb))::text
           ELSE $5::text END,
         $6::bigint, $7::bigint FROM chunks
       ON CONFLICT (id) DO NOTHING`,
      [d.id, d.jobId, d.endpointId, d.url, d.body, d.createdAt, d.nextAttemptAt, prefix, prefix.endsWith('_output_')],
    );
  },

  async claim(c: Queryable, now: number, limit: number, leaseUntil: number): Promise<WebhookDelivery[]> {
    const r = await c.query<DeliveryRow>(
      // Each the oldest pending delivery of its job: a job's later ones wait for it (they arrive in order).
      `WITH due AS (
         SELECT * FROM webhook_deliveries w WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= $1
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries o WHERE o.job_id = w.job_id AND o.next_attempt_at IS NOT NULL AND o.created_at < w.created_at)
         ORDER BY next_attempt_at, created_at LIMIT $2 FOR UPDATE SKIP LOCKED
       ), leased AS (
         UPDATE webhook_deliveries w SET next_attempt_at = $3 FROM due WHERE w.id = due.id
       )
       SELECT * FROM due ORDER BY next_attempt_at, created_at`,
      [now, limit, leaseUntil],
    );
    return r.rows.map(toDelivery);
  },

  async record(c: Queryable, id: string, attempt: WebhookAttempt, nextAttemptAt: number | null): Promise<boolean> {
    const r = await c.query(
      `UPDATE webhook_deliveries SET attempts = attempts || $2::jsonb, next_attempt_at = $3 WHERE id = $1`,
      [id, JSON.stringify([attempt]), nextAttemptAt],
    );
    if (r.rowCount === 0) return false;
    if (nextAttemptAt === null) {
      await c.query(
        `DELETE FROM webhook_deliveries w WHERE id = $1 AND next_attempt_at IS NULL AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = w.job_id)`,
        [id],
      );
    }
    return true;
  },

  async forJob(c: Queryable, jobId: string): Promise<WebhookDelivery[]> {
    const r = await c.query<DeliveryRow>(`SELECT * FROM webhook_deliveries WHERE job_id = $1 ORDER BY created_at, id`, [
      jobId,
    ]);
    return r.rows.map(toDelivery);
  },

  /** The job was deleted: its finished deliveries go too; pending ones stay until they finish. */
  async jobDeleted(c: Queryable, jobIds: string[]): Promise<void> {
    if (jobIds.length)
      await c.query(`DELETE FROM webhook_deliveries WHERE job_id = ANY($1) AND next_attempt_at IS NULL`, [jobIds]);
  },
};
