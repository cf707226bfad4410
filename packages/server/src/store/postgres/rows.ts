import type { JobStatus } from '@berth/protocol';
import type { JobRecord, WebhookAttempt, WebhookDelivery } from '../types.js';

/** A `jobs` row as pg returns it (int8 parsed as number, see `createPool`). */
export interface JobRow {
  id: string;
  endpoint_id: string;
  status: string;
  input: string;
  webhook: string | null;
  s3_config: string | null;
  execution_timeout: number;
  low_priority: boolean;
  sync: boolean;
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
export const json = (v: unknown): string | null => (v === undefined ? null : (JSON.stringify(v) ?? null));

export function toRecord(r: JobRow): JobRecord {
  const rec: JobRecord = {
    id: r.id,
    endpointId: r.endpoint_id,
    status: r.status as JobStatus,
    input: JSON.parse(r.input) as Record<string, unknown>,
    executionTimeout: r.execution_timeout,
    lowPriority: r.low_priority,
    sync: r.sync,
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
  if (r.cost !== null) rec.cost = r.cost;
  return rec;
}

/** Column list and values of an insert, in the same order. */
export const INSERT_COLUMNS = `id, endpoint_id, status, input, webhook, s3_config, execution_timeout, low_priority, sync, attempt, retries,
  worker_id, output, progress, error, created_at, queued_at, started_at, finished_at, expires_at, execution_deadline, retain_until,
  lease_until, cost`;

export function insertValues(job: JobRecord): unknown[] {
  return [
    job.id, job.endpointId, job.status, JSON.stringify(job.input), job.webhook ?? null, json(job.s3Config), job.executionTimeout,
    job.lowPriority, job.sync, job.attempt, job.retries, job.workerId ?? null, json(job.output), json(job.progress), job.error ?? null,
    job.createdAt, job.queuedAt, job.startedAt ?? null, job.finishedAt ?? null, job.expiresAt, job.executionDeadline ?? null,
    job.retainUntil ?? null, job.leaseUntil ?? null, job.cost ?? null,
  ];
}

/** A `webhook_deliveries` row. */
export interface DeliveryRow {
  id: string;
  job_id: string;
  endpoint_id: string;
  url: string;
  body: string;
  created_at: number;
  next_attempt_at: number | null;
  attempts: WebhookAttempt[];
}

export const toDelivery = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  jobId: r.job_id,
  endpointId: r.endpoint_id,
  url: r.url,
  body: r.body,
  createdAt: r.created_at,
  nextAttemptAt: r.next_attempt_at,
  attempts: r.attempts,
});
