import type { JobRecord } from '../types.js';
import { json, webhookColumn } from '../job-row.js';

export { json, toDelivery, toRecord, type DeliveryRow, type JobRow } from '../job-row.js';

/** Column list and values of an insert, in the same order. */
export const INSERT_COLUMNS = `id, endpoint_id, status, input, webhook, s3_config, execution_timeout, low_priority, sync, attempt, retries,
  worker_id, output, progress, error, created_at, queued_at, started_at, finished_at, expires_at, execution_deadline, retain_until,
  lease_until, cost`;

export function insertValues(job: JobRecord): unknown[] {
  return [
    job.id,
    job.endpointId,
    job.status,
    json(job.input), // a big body's input (`RawJson`) as the text it came as
    webhookColumn(job),
    json(job.s3Config),
    job.executionTimeout,
    job.lowPriority,
    job.sync,
    job.attempt,
    job.retries,
    job.workerId ?? null,
    json(job.output),
    json(job.progress),
    job.error ?? null,
    job.createdAt,
    job.queuedAt,
    job.startedAt ?? null,
    job.finishedAt ?? null,
    job.expiresAt,
    job.executionDeadline ?? null,
    job.retainUntil ?? null,
    job.leaseUntil ?? null,
    job.cost ?? null,
  ];
}
