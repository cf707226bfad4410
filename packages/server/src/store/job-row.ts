import type { JobStatus, WebhookEvent } from '@berth/protocol';
import { RawJson, UnreadJson } from '../core/raw-json.js';
import { BlobJson, readJsonColumn } from '../core/blob-json.js';
import type { JobLogLine, JobRecord, WebhookAttempt, WebhookDelivery } from './types.js';

/**
 * A `jobs` row as a SQL store reads it: the same columns in SQLite and PostgreSQL. Booleans come back as 0/1 from
 * SQLite and as booleans from PostgreSQL; times are epoch ms (PostgreSQL int8 is parsed as a number).
 */
export interface JobRow {
  id: string;
  endpoint_id: string;
  status: string;
  /** NULL: a big input this read left in the store (PostgreSQL's reads without it; the column is NOT NULL). */
  input: string | null;
  webhook: string | null;
  s3_config: string | null;
  execution_timeout: number;
  low_priority: number | boolean;
  sync: number | boolean;
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
  /** Read by the statements that name it (`READ_COLS` in PostgreSQL). */
  batch_id?: string | null;
}

/**
 * The `webhook` column: the URL and, when the request named `webhookEvents`, a newline and the events joined by
 * commas. A URL never holds a newline (refused on submit), so the two read back apart, with no schema change to
 * the SQL stores and nothing to add to their hot insert statements.
 */
export function webhookColumn(job: JobRecord): string | null {
  if (job.webhook === undefined) return null;
  return job.webhookEvents === undefined ? job.webhook : `${job.webhook}\n${job.webhookEvents.join(',')}`;
}

/** Sets `webhook` (and `webhookEvents`) of `rec` from a `webhook` column written by `webhookColumn`. */
export function readWebhookColumn(rec: JobRecord, text: string): void {
  const nl = text.indexOf('\n');
  if (nl < 0) {
    rec.webhook = text;
    return;
  }
  rec.webhook = text.slice(0, nl);
  rec.webhookEvents = text.slice(nl + 1).split(',') as WebhookEvent[];
}

/**
 * JSON text for a column; `undefined` stays NULL. A value kept as received (`RawJson`) is its text, not
 * re-serialized; one kept in a blob file (`BlobJson`) is its reference.
 */
export const json = (v: unknown): string | null =>
  v === undefined
    ? null
    : v instanceof BlobJson
      ? v.marker()
      : v instanceof RawJson
        ? v.string()
        : (JSON.stringify(v) ?? null);

/** The job record of a row (absent optional fields for NULL columns). */
export function toRecord(r: JobRow): JobRecord {
  const rec: JobRecord = {
    id: r.id,
    endpointId: r.endpoint_id,
    status: r.status as JobStatus,
    input: (r.input === null ? new UnreadJson(r.id) : readJsonColumn(r.input)) as Record<string, unknown>,
    executionTimeout: r.execution_timeout,
    lowPriority: r.low_priority === true || r.low_priority === 1,
    sync: r.sync === true || r.sync === 1,
    attempt: r.attempt,
    retries: r.retries,
    createdAt: r.created_at,
    queuedAt: r.queued_at,
    expiresAt: r.expires_at,
  };
  if (r.webhook !== null) readWebhookColumn(rec, r.webhook);
  if (r.s3_config !== null) rec.s3Config = JSON.parse(r.s3_config) as NonNullable<JobRecord['s3Config']>;
  if (r.worker_id !== null) rec.workerId = r.worker_id;
  if (r.output !== null) rec.output = readJsonColumn(r.output);
  if (r.progress !== null) rec.progress = JSON.parse(r.progress);
  if (r.error !== null) rec.error = r.error;
  if (r.started_at !== null) rec.startedAt = r.started_at;
  if (r.finished_at !== null) rec.finishedAt = r.finished_at;
  if (r.execution_deadline !== null) rec.executionDeadline = r.execution_deadline;
  if (r.retain_until !== null) rec.retainUntil = r.retain_until;
  if (r.lease_until !== null) rec.leaseUntil = r.lease_until;
  if (r.cost !== null && r.cost !== undefined) rec.cost = r.cost;
  if (r.batch_id !== null && r.batch_id !== undefined) rec.batchId = r.batch_id;
  return rec;
}

/** A `job_logs` row, the same in SQLite and PostgreSQL. */
export interface LogRow {
  at: number;
  level: JobLogLine['level'];
  message: string;
  worker_id: string;
  attempt: number;
  fields: string | null;
}

/** The log line of a row. */
export function toLogLine(x: LogRow): JobLogLine {
  const line: JobLogLine = { at: x.at, level: x.level, message: x.message, workerId: x.worker_id, attempt: x.attempt };
  if (x.fields !== null) line.fields = JSON.parse(x.fields) as Record<string, unknown>;
  return line;
}

/** A `webhook_deliveries` row: `attempts` is JSON text in SQLite and already parsed (jsonb) in PostgreSQL. */
export interface DeliveryRow {
  id: string;
  job_id: string;
  endpoint_id: string;
  url: string;
  body: string;
  created_at: number;
  next_attempt_at: number | null;
  attempts: string | WebhookAttempt[];
}

/** The delivery of a row. */
export const toDelivery = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  jobId: r.job_id,
  endpointId: r.endpoint_id,
  url: r.url,
  body: r.body,
  createdAt: r.created_at,
  nextAttemptAt: r.next_attempt_at,
  attempts: typeof r.attempts === 'string' ? (JSON.parse(r.attempts) as WebhookAttempt[]) : r.attempts,
});
