import type { ApiResponse } from '../types.js';
import type { RouteContext } from './route-context.js';
import type { Store } from '../../store/types.js';
import { deliveryState, eventOf } from '../../store/webhook-delivery.js';
import { LEAN } from '../../jobs/job-service.js';

/**
 * `GET /v2/<ep>/webhooks/<job_id>`: the job's webhook deliveries (each with its `event`) and every attempt (status
 * code or error, time), for debugging a receiver. 404 like `/status` when the job is unknown or gone.
 */
export async function webhookLog(rc: RouteContext, store: Store): Promise<ApiResponse> {
  const job = await rc.service.get(rc.endpointId, rc.jobId, LEAN);
  const deliveries = (await store.webhookDeliveries(job.id)).map((d) => ({
    webhookId: d.id,
    event: eventOf(d.id),
    url: d.url,
    state: deliveryState(d),
    createdAt: d.createdAt,
    nextAttemptAt: d.nextAttemptAt,
    attempts: d.attempts,
  }));
  const events = job.webhook === undefined ? null : (job.webhookEvents ?? ['completed']);
  return { status: 200, json: { id: job.id, webhook: job.webhook ?? null, webhookEvents: events, deliveries } };
}
