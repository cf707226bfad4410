import type { JobStatus } from '@berth/protocol';
import type { JobRecord } from '../types.js';

/** A `jobs` row as better-sqlite3 returns it. */
export interface JobRow {
  id: string;
  endpoint_id: string;
  status: string;
  input: string;
  webhook: string | null;
  s3_config: string | null;
  execution_timeout: number;
  low_priority: number;
  sync: number;
  attempt: number;
  retries: number;
  worker_id: string | null;
  output: string | null;
  progress: string | null;
  error: string | null;
  created_at: number;
  queued_at: number;
  started_at: number | null;
  finished_at: number | null;
  expires_at: number;
  execution_deadline: number | null;
  retain_until: number | null;
  lease_until: number | null;
  cost: number | null;
}

/** JSON text for a column; `undefined` stays NULL. */
export const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

export function toRecord(r: JobRow): JobRecord {
  const rec: JobRecord = {
    id: r.id,
    endpointId: r.endpoint_id,
    status: r.status as JobStatus,
    input: JSON.parse(r.input) as Record<string, unknown>,
    executionTimeout: r.execution_timeout,
    lowPriority: r.low_priority === 1,
    sync: r.sync === 1,
    attempt: r.attempt,
    retries: r.retries,
    createdAt: r.created_at,
    queuedAt: r.queued_at,
    expiresAt: r.expires_at,
  };
  if (r.webhook !== null) rec.webhook = r.webhook;
  if (r.s3_config !== null) rec.s3Config = JSON.parse(r.s3_config) as NonNullable<JobRecord['s3Config']>;
  if (r.worker_id !== null) rec.workerId = r.worker_id;
  if (r.output !== null) rec.output = JSON.parse(r.output);
  if (r.progress !== null) rec.progress = JSON.parse(r.progress);
  if (r.error !== null) rec.error = r.error;
  if (r.started_at !== null) rec.startedAt = r.started_at;
  if (r.finished_at !== null) rec.finishedAt = r.finished_at;
  if (r.execution_deadline !== null) rec.executionDeadline = r.execution_deadline;
  if (r.retain_until !== null) rec.retainUntil = r.retain_until;
  if (r.lease_until !== null) rec.leaseUntil = r.lease_until;
  if (r.cost !== null && r.cost !== undefined) rec.cost = r.cost;
  return rec;
}

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
