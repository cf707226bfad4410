import type { JobRecord } from '../types.js';
import { RawJson } from '../../core/raw-json.js';
import { BlobJson } from '../../core/blob-json.js';
import { json, webhookColumn } from '../job-row.js';

export { json, toDelivery, toRecord, type DeliveryRow, type JobRow } from '../job-row.js';

/** Column list and values of an insert, in the same order. */
export const INSERT_COLUMNS = `id, endpoint_id, status, input, webhook, s3_config, execution_timeout, low_priority, sync, attempt, retries,
  worker_id, output, progress, error, created_at, queued_at, started_at, finished_at, expires_at, execution_deadline, retain_until,
  lease_until, cost`;

/**
 * Bytes from which a JSON value is big: a read that does not need it leaves it in the table (`UnreadJson`), and
 * a write sends it in a statement of its own.
 */
export const BIG_VALUE_CHARS = 64 * 1024;

/**
 * A JSON column's value as a scalar parameter: as `json`, except that a value kept as the bytes it came as
 * (`RawJson` of a big body) goes as those bytes. `pg` sends a Buffer as a binary parameter, which PostgreSQL reads
 * into a text column as it is (checking its UTF-8): no 19 MiB string decoded on the event loop and encoded again
 * into the bind message. Not for arrays: `pg` writes a Buffer inside an array as bytea hex.
 */
export function jsonParam(v: unknown): string | Buffer | null {
  if (v instanceof RawJson && !(v instanceof BlobJson)) {
    const text = v.text;
    if (Buffer.isBuffer(text)) return text;
  }
  return json(v);
}

/** Whether a job or finish parameter is big: it goes in a statement of its own (`insert-batch.ts`, `finish-batch.ts`). */
export const bigParam = (v: unknown): boolean =>
  Buffer.isBuffer(v) ? v.length >= BIG_VALUE_CHARS : typeof v === 'string' && v.length >= BIG_VALUE_CHARS;

/** Whether a job's input is big (a statement of its own). */
export const bigInput = (job: JobRecord): boolean => {
  const input = job.input as unknown;
  return input instanceof RawJson && !(input instanceof BlobJson) && input.length >= BIG_VALUE_CHARS;
};

/** The insert's values; `scalar`: for a one-row statement, a big input as its bytes (`jsonParam`). */
export function insertValues(job: JobRecord, scalar = false): unknown[] {
  return [
    job.id,
    job.endpointId,
    job.status,
    scalar ? jsonParam(job.input) : json(job.input), // a big body's input (`RawJson`) as the text or bytes it came as
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
