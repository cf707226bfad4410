import type { JobRecord, WebhookAttempt, WebhookDelivery } from '../types.js';
import { coalescingPrefix, mergedOutputBody, newWebhookDelivery } from '../webhook-delivery.js';

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

  /**
   * Stores a delivery (an event's, or a terminal one); an id already held is left as it is. A `progress` or
   * `output` replaces the job's ones of the same event that were never attempted nor claimed (an `output` takes
   * their chunks first).
   */
  enqueue(d: WebhookDelivery): void {
    if (this.byId.has(d.id)) return;
    const prefix = coalescingPrefix(d);
    const older = prefix
      ? [...(this.byJob.get(d.jobId) ?? [])]
          .map((id) => this.byId.get(id)!)
          .filter((o) => o.id.startsWith(prefix) && o.attempts.length === 0 && o.nextAttemptAt !== null)
          .filter((o) => o.nextAttemptAt! <= d.createdAt)
          .sort((a, b) => a.createdAt - b.createdAt)
      : [];
    for (const o of older) {
      this.pending.delete(o);
      this.drop(o.id, o.jobId);
    }
    const held = copy(d);
    if (older.length > 0 && prefix?.endsWith('_output_'))
      held.body = mergedOutputBody(
        older.map((o) => o.body),
        d.body,
      );
    this.byId.set(d.id, held);
    this.pending.add(held);
    let s = this.byJob.get(d.jobId);
    if (!s) this.byJob.set(d.jobId, (s = new Set()));
    s.add(d.id);
  }

  /**
   * Due deliveries, earliest first, each the oldest pending one of its job (ties: all of that time): a job's
   * later deliveries wait until its earlier ones are delivered or failed for good, so they arrive in order.
   */
  claim(now: number, limit: number, leaseUntil: number): WebhookDelivery[] {
    const first = new Map<string, number>();
    for (const d of this.pending)
      if (d.nextAttemptAt !== null) first.set(d.jobId, Math.min(first.get(d.jobId) ?? Infinity, d.createdAt));
    const due = [...this.pending].filter(
      (d) => d.nextAttemptAt !== null && d.nextAttemptAt <= now && d.createdAt === first.get(d.jobId),
    );
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
