import type { Queryable } from './pg-pools.js';
import { newWebhookDelivery } from '../../webhooks/delivery.js';
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

  /** Stores a delivery (an event's, or a terminal one); an id already stored is left as it is. */
  async enqueue(c: Queryable, d: WebhookDelivery): Promise<void> {
    await c.query(
      `INSERT INTO webhook_deliveries (id, job_id, endpoint_id, url, body, created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (id) DO NOTHING`,
      [d.id, d.jobId, d.endpointId, d.url, d.body, d.createdAt, d.nextAttemptAt],
    );
  },

  async claim(c: Queryable, now: number, limit: number, leaseUntil: number): Promise<WebhookDelivery[]> {
    const r = await c.query<DeliveryRow>(
      `WITH due AS (
         SELECT * FROM webhook_deliveries WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= $1
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
