import type { JobRecord, WebhookDelivery } from '../store/types.js';
import { toWebhookBody } from '../jobs/job-view.js';

/**
 * The outbox row a store writes inside the terminal transition of a job that has a `webhook`. The body is a
 * snapshot taken then, so it survives the job's deletion and a later `/retry`. The id is the `webhook-id`
 * header, the same on every attempt: one per job per terminal transition (`retries` numbers those).
 */
export function newWebhookDelivery(job: JobRecord & { webhook: string }, now: number): WebhookDelivery {
  return {
    id: `msg_${job.id}_${job.retries}`,
    jobId: job.id,
    endpointId: job.endpointId,
    url: job.webhook,
    body: JSON.stringify(toWebhookBody(job)),
    createdAt: now,
    nextAttemptAt: now,
    attempts: [],
  };
}

/** How a delivery stands, for the debugging view. */
export function deliveryState(d: WebhookDelivery): 'pending' | 'delivered' | 'failed' {
  if (d.nextAttemptAt !== null) return 'pending';
  const last = d.attempts.at(-1);
  return last?.status !== undefined && last.status >= 200 && last.status < 300 ? 'delivered' : 'failed';
}
