import type { JobRecord, WebhookAttempt, WebhookDelivery } from '../types.js';
import { newWebhookDelivery } from '../../webhooks/delivery.js';

const copy = (d: WebhookDelivery): WebhookDelivery => ({ ...d, attempts: d.attempts.map((a) => ({ ...a })) });

/**
 * The webhook outbox of `MemoryStore`. Pending deliveries are kept until they finish; finished ones are dropped
 * with their job (or when they finish after the job is gone), so memory follows the jobs held.
 */
export class MemoryWebhookOutbox {
  private readonly byId = new Map<string, WebhookDelivery>();
  private readonly byJob = new Map<string, Set<string>>();
  /** Deliveries with an attempt due (or leased): what `claim` scans, not the finished ones kept for the log. */
  private readonly pending = new Set<WebhookDelivery>();

  constructor(private readonly jobExists: (jobId: string) => boolean) {}

  /** Called by the store inside a terminal transition. */
  add(job: JobRecord, now: number): void {
    const d = newWebhookDelivery(job, now);
    if (d) this.enqueue(d);
  }

  /** Stores a delivery (an event's, or a terminal one); an id already held is left as it is. */
  enqueue(d: WebhookDelivery): void {
    if (this.byId.has(d.id)) return;
    const held = copy(d);
    this.byId.set(d.id, held);
    this.pending.add(held);
    let s = this.byJob.get(d.jobId);
    if (!s) this.byJob.set(d.jobId, (s = new Set()));
    s.add(d.id);
  }

  claim(now: number, limit: number, leaseUntil: number): WebhookDelivery[] {
    const due = [...this.pending].filter((d) => d.nextAttemptAt !== null && d.nextAttemptAt <= now);
    due.sort((a, b) => a.nextAttemptAt! - b.nextAttemptAt! || a.createdAt - b.createdAt);
    return due.slice(0, limit).map((d) => {
      d.nextAttemptAt = leaseUntil;
      return copy(d);
    });
  }

  record(id: string, attempt: WebhookAttempt, nextAttemptAt: number | null): boolean {
    const d = this.byId.get(id);
    if (!d) return false;
    d.attempts.push({ ...attempt });
    d.nextAttemptAt = nextAttemptAt;
    if (nextAttemptAt === null) this.pending.delete(d);
    if (nextAttemptAt === null && !this.jobExists(d.jobId)) this.drop(id, d.jobId);
    return true;
  }

  forJob(jobId: string): WebhookDelivery[] {
    const ids = this.byJob.get(jobId) ?? [];
    return [...ids].map((id) => copy(this.byId.get(id)!)).sort((a, b) => a.createdAt - b.createdAt);
  }

  /** The job is deleted: finished deliveries go with it; pending ones stay until they finish. */
  jobDeleted(jobId: string): void {
    for (const id of this.byJob.get(jobId) ?? []) if (this.byId.get(id)?.nextAttemptAt === null) this.drop(id, jobId);
  }

  private drop(id: string, jobId: string): void {
    this.byId.delete(id);
    const s = this.byJob.get(jobId);
    s?.delete(id);
    if (s?.size === 0) this.byJob.delete(jobId);
  }
}
