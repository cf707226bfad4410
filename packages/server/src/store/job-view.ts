import type { JobObject } from '@berth/protocol';
import type { JobRecord } from './types.js';

/**
 * The wire job object of a record (docs/api.md, "The job object"). While running, `output` carries the latest progress
 * (what RunPod clients expect) and `progress` keeps it separately; `s3Config` never leaves the server.
 */
export function toJobObject(r: JobRecord): JobObject {
  const o: JobObject = { id: r.id, status: r.status };
  if (r.startedAt !== undefined) o.delayTime = Math.max(0, r.startedAt - r.queuedAt);
  if (r.startedAt !== undefined && r.finishedAt !== undefined)
    o.executionTime = Math.max(0, r.finishedAt - r.startedAt);
  if (r.status === 'COMPLETED') o.output = r.output;
  else if (r.status === 'IN_PROGRESS' && r.progress !== undefined) o.output = r.progress;
  if (r.status === 'IN_PROGRESS' && r.progress !== undefined) o.progress = r.progress;
  if (r.error !== undefined && (r.status === 'FAILED' || r.status === 'TIMED_OUT')) o.error = r.error;
  if (r.retries > 0) o.retries = r.retries;
  if (r.workerId !== undefined) o.workerId = r.workerId;
  if (r.batchId !== undefined) o.batchId = r.batchId;
  return o;
}

/** The webhook body: the job object plus `input` (unless `withInput` is false) and `webhook`. */
export function toWebhookBody(r: JobRecord, withInput = true): JobObject {
  const o = toJobObject(r);
  if (withInput) o.input = r.input;
  if (r.webhook !== undefined) o.webhook = r.webhook;
  return o;
}
