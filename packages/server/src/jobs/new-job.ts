import { LIMITS, type JobRequest } from '@berth/protocol';
import type { JobRecord } from '../store/types.js';
import { newJobId } from './ids.js';

/** A new IN_QUEUE job for a request, with the request's policy (or the defaults) applied at `now`. */
export function newJob(endpointId: string, req: JobRequest, sync: boolean, now: number): JobRecord {
  const job: JobRecord = {
    id: newJobId(sync),
    endpointId,
    status: 'IN_QUEUE',
    input: req.input,
    executionTimeout: req.policy?.executionTimeout ?? LIMITS.executionTimeoutDefault,
    lowPriority: req.policy?.lowPriority ?? false,
    sync,
    attempt: 0,
    retries: 0,
    createdAt: now,
    queuedAt: now,
    expiresAt: now + (req.policy?.ttl ?? LIMITS.ttlDefault),
  };
  if (req.webhook !== undefined) job.webhook = req.webhook;
  if (req.webhookEvents !== undefined) job.webhookEvents = req.webhookEvents;
  if (req.s3Config !== undefined) job.s3Config = req.s3Config;
  return job;
}
