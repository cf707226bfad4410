import { randomBytes } from 'node:crypto';
import type { WebhookEvent } from '@berth/protocol';
import type { JobRecord, WebhookDelivery } from './types.js';
import { toWebhookBody } from './job-view.js';
import { jsonBytes } from '../core/raw-json.js';

/** The events a job's webhook is sent for when the request names none: RunPod's (the terminal state only). */
export const DEFAULT_WEBHOOK_EVENTS: readonly WebhookEvent[] = ['completed'];

/** Whether `job` has a webhook that asked for `event`. */
export function wantsEvent(job: JobRecord, event: WebhookEvent): boolean {
  return job.webhook !== undefined && (job.webhookEvents ?? DEFAULT_WEBHOOK_EVENTS).includes(event);
}

/**
 * The `completed` outbox row a store writes inside the terminal transition of a job whose webhook asked for it
 * (the default), or undefined. The body is a snapshot taken then, so it survives the job's deletion and a later
 * `/retry`. The id is the `webhook-id` header, the same on every attempt: one per job per terminal transition
 * (`retries` numbers those).
 */
export function newWebhookDelivery(job: JobRecord, now: number): WebhookDelivery | undefined {
  if (job.webhook === undefined || !wantsEvent(job, 'completed')) return undefined;
  return {
    id: `msg_${job.id}_${job.retries}`,
    jobId: job.id,
    endpointId: job.endpointId,
    url: job.webhook,
    // A big input or output (kept as bytes, or in a blob file) is spliced in as its bytes, not parsed again.
    body: jsonBytes({ ...toWebhookBody(job), event: 'completed' }).toString(),
    createdAt: now,
    nextAttemptAt: now,
    attempts: [],
  };
}

/**
 * A delivery of a non-terminal event (`start`, `progress`, `output`): the job object as `job` holds it plus
 * `webhook`, `event` and `extra` (the chunks of an `output`), without `input` (the `completed` one carries it: a
 * big input copied into every `progress` row was most of the outbox). Its id `msg_<job id>_<event>_<random>`
 * names the event.
 */
export function newEventDelivery(
  job: JobRecord & { webhook: string },
  event: Exclude<WebhookEvent, 'completed'>,
  extra: Record<string, unknown>,
  now: number,
): WebhookDelivery {
  return {
    id: `msg_${job.id}_${event}_${randomBytes(6).toString('hex')}`,
    jobId: job.id,
    endpointId: job.endpointId,
    url: job.webhook,
    body: JSON.stringify({ ...toWebhookBody(job, false), event, ...extra }),
    createdAt: now,
    nextAttemptAt: now,
    attempts: [],
  };
}

/** The event a delivery is for, read from its id (`msg_<job>_<retries>` is a `completed`). */
export function eventOf(deliveryId: string): WebhookEvent {
  const kind = deliveryId.split('_')[2];
  return kind === 'start' || kind === 'progress' || kind === 'output' ? kind : 'completed';
}

/**
 * The prefix of the ids of a job's deliveries of a coalescing event (`progress`, `output`), or undefined for the
 * others: a newer one of these replaces the job's undelivered ones (the store's `enqueueWebhook`).
 */
export function coalescingPrefix(d: WebhookDelivery): string | undefined {
  const kind = eventOf(d.id);
  return kind === 'progress' || kind === 'output' ? `msg_${d.jobId}_${kind}_` : undefined;
}

/**
 * The body of an `output` delivery that replaces undelivered older ones (bodies in order): their chunks, then its
 * own, in its `stream`. Progress deliveries are replaced as they are (the newest progress is what counts).
 */
export function mergedOutputBody(older: readonly string[], body: string): string {
  const stream = (b: string) => ((JSON.parse(b) as { stream?: unknown[] }).stream ?? []) as unknown[];
  const merged = JSON.parse(body) as Record<string, unknown>;
  merged['stream'] = [...older.flatMap(stream), ...stream(body)];
  return JSON.stringify(merged);
}

/** How a delivery stands, for the debugging view. */
export function deliveryState(d: WebhookDelivery): 'pending' | 'delivered' | 'failed' {
  if (d.nextAttemptAt !== null) return 'pending';
  const last = d.attempts.at(-1);
  return last?.status !== undefined && last.status >= 200 && last.status < 300 ? 'delivered' : 'failed';
}
