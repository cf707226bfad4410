import type { BatchCounts, BatchRecord, BatchStatus } from './batch-types.js';

/** A `batches` row, the same columns in SQLite and PostgreSQL (times epoch ms; int8 parsed as a number). */
export interface BatchRow {
  id: string;
  endpoint_id: string;
  status: string;
  name: string | null;
  webhook: string | null;
  created_at: number | string;
  finalized_at: number | string | null;
  finished_at: number | string | null;
  total: number | string;
}

/** The batch of a row (absent optional fields for NULL columns). */
export function toBatch(r: BatchRow): BatchRecord {
  const b: BatchRecord = {
    id: r.id,
    endpointId: r.endpoint_id,
    status: r.status as BatchStatus,
    createdAt: Number(r.created_at),
    total: Number(r.total),
  };
  if (r.name !== null) b.name = r.name;
  if (r.webhook !== null) b.webhook = r.webhook;
  if (r.finalized_at !== null) b.finalizedAt = Number(r.finalized_at);
  if (r.finished_at !== null) b.finishedAt = Number(r.finished_at);
  return b;
}

/** The values of a batch insert, in the column order of `BATCH_INSERT_COLUMNS`. */
export const BATCH_INSERT_COLUMNS = 'id, endpoint_id, status, name, webhook, created_at, total';
export const batchValues = (b: BatchRecord): unknown[] => [
  b.id,
  b.endpointId,
  b.status,
  b.name ?? null,
  b.webhook ?? null,
  b.createdAt,
  b.total,
];

/** Counts from `(status, n)` rows of a GROUP BY over a batch's jobs. */
export function toCounts(rows: { status: string; n: number | string }[]): BatchCounts {
  const c: BatchCounts = { queued: 0, inProgress: 0, completed: 0, failed: 0, cancelled: 0 };
  for (const r of rows) {
    const n = Number(r.n);
    if (r.status === 'IN_QUEUE') c.queued += n;
    else if (r.status === 'IN_PROGRESS') c.inProgress += n;
    else if (r.status === 'COMPLETED') c.completed += n;
    else if (r.status === 'CANCELLED') c.cancelled += n;
    else c.failed += n; // FAILED, TIMED_OUT
  }
  return c;
}
