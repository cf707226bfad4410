import type { JobStatus } from '@berth/protocol';
import type { JobRecord } from '../types.js';
import { json, readWebhookColumn, webhookColumn } from '../job-row.js';
import type { BigInputs } from './big-inputs.js';
import { readJsonColumn } from '../../core/blob-json.js';

export { json } from '../job-row.js';

/**
 * The columns a job record is read from, in this order: statements that return jobs name them (never `*`) and run
 * in raw mode (`Statement.raw()`), so better-sqlite3 hands back an array per row instead of building an object of
 * 29 named properties, which cost more than the statement itself (`Data::GetFlatRowJS` in a native profile).
 */
export const JOB_COLUMNS = `id, endpoint_id, status, input, webhook, s3_config, execution_timeout, low_priority, sync,
  attempt, retries, worker_id, output, progress, error, created_at, queued_at, started_at, finished_at, expires_at,
  execution_deadline, retain_until, lease_until, cost, batch_id`;

/** A row of `JOB_COLUMNS` in raw mode. */
export type RawJobRow = unknown[];

/**
 * The job record of a raw row (absent optional fields for NULL columns). An input stored aside (`''`, see
 * big-inputs.ts) is attached by `big`, read when used.
 */
export function toRecord(r: RawJobRow, big?: BigInputs): JobRecord {
  const aside = r[3] === '';
  if (aside && !big) throw new Error(`job ${String(r[0])}: its input is stored aside and this reader cannot read it`);
  const rec: JobRecord = {
    id: r[0] as string,
    endpointId: r[1] as string,
    status: r[2] as JobStatus,
    input: aside ? {} : (readJsonColumn(r[3] as string, big?.blobDir) as Record<string, unknown>),
    executionTimeout: r[6] as number,
    lowPriority: r[7] === 1,
    sync: r[8] === 1,
    attempt: r[9] as number,
    retries: r[10] as number,
    createdAt: r[15] as number,
    queuedAt: r[16] as number,
    expiresAt: r[19] as number,
  };
  if (r[4] !== null) readWebhookColumn(rec, r[4] as string);
  if (r[5] !== null) rec.s3Config = JSON.parse(r[5] as string) as NonNullable<JobRecord['s3Config']>;
  if (r[11] !== null) rec.workerId = r[11] as string;
  if (r[12] !== null) rec.output = readJsonColumn(r[12] as string, big?.blobDir);
  if (r[13] !== null) rec.progress = JSON.parse(r[13] as string);
  if (r[14] !== null) rec.error = r[14] as string;
  if (r[17] !== null) rec.startedAt = r[17] as number;
  if (r[18] !== null) rec.finishedAt = r[18] as number;
  if (r[20] !== null) rec.executionDeadline = r[20] as number;
  if (r[21] !== null) rec.retainUntil = r[21] as number;
  if (r[22] !== null) rec.leaseUntil = r[22] as number;
  if (r[23] !== null) rec.cost = r[23] as number;
  if (r[24] !== null && r[24] !== undefined) rec.batchId = r[24] as string;
  return aside ? big!.attach(rec) : rec;
}

/**
 * Positional parameters of the insert statement, in its column order (positional binding skips a property lookup
 * per parameter). A big input is stored aside by `big` first.
 */
export function insertParams(job: JobRecord, queueSeq: number | null, big: BigInputs): unknown[] {
  return [
    job.id,
    job.endpointId,
    job.status,
    big.column(job.id, job.input),
    webhookColumn(job),
    json(job.s3Config),
    job.executionTimeout,
    job.lowPriority ? 1 : 0,
    job.sync ? 1 : 0,
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
    queueSeq,
  ];
}
