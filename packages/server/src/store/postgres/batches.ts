import type { PoolClient } from 'pg';
import { BATCH_SEQ, BatchLimitError, HELD_SEQ } from '../batch-types.js';
import type { BatchLimits, BatchRecord, BatchStore } from '../batch-types.js';
import { BATCH_INSERT_COLUMNS, batchValues, toBatch, toCounts, type BatchRow } from '../batch-row.js';
import type { JobRecord } from '../types.js';
import type { PgPools } from './pg-pools.js';
import { insertValues, INSERT_COLUMNS, toRecord } from './rows.js';
import { COLS, INSERT_TYPES, named, READ_COLS } from './statements.js';
import { pgMaintenance } from './maintenance.js';
import { pgOutbox } from './webhook-outbox.js';

/** Held jobs in one statement: one array per insert column, positions from the shared sequence above `HELD_SEQ`. */
const INSERT_HELD = `
  INSERT INTO jobs (${INSERT_COLUMNS}, queue_seq, batch_id)
  SELECT ${COLS}, ${HELD_SEQ} + nextval('queue_seq'), $25 FROM unnest(${INSERT_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})
    WITH ORDINALITY AS t(${COLS}, ord)
  ORDER BY ord`;

const SQL = {
  /** Serialises the limit checks of one endpoint's batch writes across replicas (until the transaction ends). */
  lock: `SELECT pg_advisory_xact_lock(hashtext('berth-batch:' || $1))`,
  openCount: `SELECT count(*)::int AS n FROM batches WHERE endpoint_id = $1 AND finished_at IS NULL`,
  queuedCount: `SELECT count(*)::int AS n FROM jobs WHERE endpoint_id = $1 AND status = 'IN_QUEUE' AND queue_seq >= ${BATCH_SEQ}`,
  insertBatch: `INSERT INTO batches (${BATCH_INSERT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  get: `SELECT * FROM batches WHERE id = $1`,
  lockBatch: `SELECT * FROM batches WHERE id = $1 FOR UPDATE`,
  list: `SELECT * FROM batches WHERE endpoint_id = $1 AND ($2::bigint IS NULL OR (created_at, id COLLATE "C") < ($2, $3 COLLATE "C"))
    ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $4`,
  rename: `UPDATE batches SET name = $2 WHERE id = $1 RETURNING *`,
  addTotal: `UPDATE batches SET total = total + $2 WHERE id = $1 RETURNING *`,
  finalize: `UPDATE batches SET status = 'FINALIZED', finalized_at = $2 WHERE id = $1 AND status = 'DRAFT' RETURNING *`,
  cancel: `UPDATE batches SET status = 'CANCELLED' WHERE id = $1 AND status IN ('DRAFT', 'FINALIZED') AND finished_at IS NULL RETURNING *`,
  end: `UPDATE batches SET finished_at = $2, status = $3 WHERE id = $1 AND finished_at IS NULL RETURNING *`,
  unended: `SELECT * FROM batches WHERE finished_at IS NULL AND status IN ('FINALIZED', 'CANCELLED') LIMIT $1`,
  ended: `SELECT * FROM batches WHERE finished_at <= $1 LIMIT $2`,
  dropBatch: `DELETE FROM batches WHERE id = $1`,
  /** Through jobs_queue: the endpoint's held jobs in position order, those of this batch. */
  release: `UPDATE jobs SET queue_seq = jobs.queue_seq - ${HELD_SEQ - BATCH_SEQ} FROM (
      SELECT id FROM jobs WHERE endpoint_id = $1 AND status = 'IN_QUEUE' AND queue_seq >= ${HELD_SEQ} AND batch_id = $2
      ORDER BY queue_seq LIMIT $3 FOR UPDATE SKIP LOCKED) p WHERE jobs.id = p.id`,
  cancelJobs: `UPDATE jobs SET status = 'CANCELLED', finished_at = $4::bigint,
      retain_until = $4::bigint + CASE WHEN sync THEN $5::bigint ELSE $6::bigint END, queue_seq = NULL FROM (
      SELECT id FROM jobs WHERE endpoint_id = $1 AND status = 'IN_QUEUE' AND queue_seq >= ${BATCH_SEQ} AND batch_id = $2
      LIMIT $3 FOR UPDATE SKIP LOCKED) p WHERE jobs.id = p.id RETURNING jobs.id`,
  counts: `SELECT status, count(*)::int AS n FROM jobs WHERE batch_id = $1 GROUP BY status`,
  page: `SELECT ${READ_COLS} FROM jobs WHERE batch_id = $1 AND id COLLATE "C" > $2 ORDER BY id COLLATE "C" LIMIT $3 OFFSET $4`,
  running: `SELECT ${READ_COLS} FROM jobs WHERE batch_id = $1 AND status = 'IN_PROGRESS' LIMIT $2`,
  live: `SELECT 1 AS n FROM jobs WHERE batch_id = $1 AND status IN ('IN_QUEUE', 'IN_PROGRESS') LIMIT 1`,
  someIds: `SELECT id FROM jobs WHERE batch_id = $1 LIMIT $2`,
  dropHeld: `DELETE FROM jobs WHERE id = $1 AND batch_id = $2 AND status = 'IN_QUEUE'`,
};

/** One array per insert column of `jobs` (the order of `INSERT_COLUMNS`). */
function columns(jobs: JobRecord[]): unknown[][] {
  const cols = INSERT_TYPES.map((): unknown[] => []);
  for (const job of jobs) insertValues(job).forEach((v, i) => cols[i]!.push(v));
  return cols;
}

async function checkLimits(
  c: PoolClient,
  endpointId: string,
  adding: number,
  limits: BatchLimits,
  newBatch: boolean,
): Promise<void> {
  await c.query(named(SQL.lock, [endpointId]));
  if (newBatch) {
    const open = (await c.query<{ n: number }>(named(SQL.openCount, [endpointId]))).rows[0]!.n;
    if (open >= limits.maxOpen) throw new BatchLimitError('maxOpen', open);
  }
  if (adding === 0) return;
  const queued = (await c.query<{ n: number }>(named(SQL.queuedCount, [endpointId]))).rows[0]!.n;
  if (queued + adding > limits.maxQueued) throw new BatchLimitError('maxQueued', queued);
}

const one = (rows: BatchRow[]): BatchRecord | undefined => (rows[0] ? toBatch(rows[0]) : undefined);

/**
 * `BatchStore` on PostgreSQL (batch-types.ts). Limits are checked under an advisory lock per endpoint, so replicas
 * adding to one endpoint at once cannot pass them; chunked writes lock rows with `SKIP LOCKED`, so two replicas
 * releasing or cancelling one batch share the work. `queued(endpointId)`: jobs were released (wakes claimers here
 * and on the other replicas).
 */
export function pgBatchStore(db: PgPools, queued: (endpointId: string) => void): BatchStore {
  const rows = async (sql: string, params: unknown[]) => db.run<BatchRow>(sql, params);
  return {
    createBatch: (batch, jobs, limits) =>
      db.tx(async (c) => {
        await checkLimits(c, batch.endpointId, jobs.length, limits, true);
        await c.query(named(SQL.insertBatch, batchValues({ ...batch, total: jobs.length })));
        if (jobs.length) await c.query(INSERT_HELD, [...columns(jobs), batch.id]);
      }),
    getBatch: async (id) => one(await rows(SQL.get, [id])),
    listBatches: async (endpointId, limit, after) =>
      (await rows(SQL.list, [endpointId, after?.createdAt ?? null, after?.id ?? null, limit])).map(toBatch),
    renameBatch: async (id, name) => one(await rows(SQL.rename, [id, name ?? null])),
    addToBatch: (id, jobs, limits) =>
      db.tx(async (c) => {
        const b = one((await c.query<BatchRow>(named(SQL.lockBatch, [id]))).rows);
        if (!b) return undefined;
        if (b.status !== 'DRAFT') return 'not_draft' as const;
        await checkLimits(c, b.endpointId, jobs.length, limits, false);
        if (jobs.length) await c.query(INSERT_HELD, [...columns(jobs), id]);
        return one((await c.query<BatchRow>(named(SQL.addTotal, [id, jobs.length]))).rows);
      }),
    removeFromBatch: (id, jobId) =>
      db.tx(async (c) => {
        const b = one((await c.query<BatchRow>(named(SQL.lockBatch, [id]))).rows);
        if (!b) return false;
        if (b.status !== 'DRAFT') return 'not_draft' as const;
        // A held job never ran: no chunks, logs or deliveries go with it.
        const gone = await c.query(named(SQL.dropHeld, [jobId, id]));
        if (!gone.rowCount) return false;
        await c.query(named(SQL.addTotal, [id, -1]));
        return true;
      }),
    finalizeBatch: async (id, now) => one(await rows(SQL.finalize, [id, now])),
    releaseBatch: async (id, limit) => {
      const b = one(await rows(SQL.get, [id]));
      if (b?.status !== 'FINALIZED') return 0;
      const n = await db.use(async (p) => (await p.query(named(SQL.release, [b.endpointId, id, limit]))).rowCount ?? 0);
      if (n > 0) queued(b.endpointId);
      return n;
    },
    cancelBatch: async (id) => one(await rows(SQL.cancel, [id])),
    cancelBatchJobs: async (id, now, retention, limit) => {
      const b = one(await rows(SQL.get, [id]));
      if (!b) return [];
      const r = await db.run<{ id: string }>(SQL.cancelJobs, [
        b.endpointId,
        id,
        limit,
        now,
        retention.sync,
        retention.async,
      ]);
      return r.map((x) => x.id);
    },
    batchCounts: async (id) => toCounts(await db.run<{ status: string; n: number }>(SQL.counts, [id])),
    batchJobs: async (id, q) => (await db.run(SQL.page, [id, q.after ?? '', q.limit, q.offset ?? 0])).map(toRecord),
    runningBatchJobs: async (id, limit) => (await db.run(SQL.running, [id, limit])).map(toRecord),
    batchLive: async (id) => (await db.run<{ n: number }>(SQL.live, [id])).length > 0,
    endBatch: (id, now, status, delivery) =>
      db.tx(async (c) => {
        const b = one((await c.query<BatchRow>(named(SQL.end, [id, now, status]))).rows);
        if (b && delivery) await pgOutbox.enqueue(c, delivery);
        return b;
      }),
    unendedBatches: async (limit) => (await rows(SQL.unended, [limit])).map(toBatch),
    endedBatches: async (before, limit) => (await rows(SQL.ended, [before, limit])).map(toBatch),
    deleteBatch: async (id, limit) => {
      const ids = (await db.run<{ id: string }>(SQL.someIds, [id, limit])).map((r) => r.id);
      for (const jobId of ids) await pgMaintenance.delete(db.tx, jobId);
      if (ids.length === limit) return false;
      await db.tx(async (c) => {
        await c.query(named(SQL.dropBatch, [id]));
        await pgOutbox.jobDeleted(c, [id]);
      });
      return true;
    },
  };
}
