import type { JobRecord } from '../types.js';
import { json } from '../job-row.js';

export { json, toRecord, type JobRow } from '../job-row.js';

/** Named parameters of the insert statement. */
export function insertParams(job: JobRecord, queueSeq: number | null): Record<string, unknown> {
  return {
    id: job.id,
    endpoint_id: job.endpointId,
    status: job.status,
    input: JSON.stringify(job.input),
    webhook: job.webhook ?? null,
    s3_config: json(job.s3Config),
    execution_timeout: job.executionTimeout,
    low_priority: job.lowPriority ? 1 : 0,
    sync: job.sync ? 1 : 0,
    attempt: job.attempt,
    retries: job.retries,
    worker_id: job.workerId ?? null,
    output: json(job.output),
    progress: json(job.progress),
    error: job.error ?? null,
    created_at: job.createdAt,
    queued_at: job.queuedAt,
    started_at: job.startedAt ?? null,
    finished_at: job.finishedAt ?? null,
    expires_at: job.expiresAt,
    execution_deadline: job.executionDeadline ?? null,
    retain_until: job.retainUntil ?? null,
    lease_until: job.leaseUntil ?? null,
    cost: job.cost ?? null,
    queue_seq: queueSeq,
  };
}
