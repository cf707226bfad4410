import type { Statement } from 'better-sqlite3';
import { BATCH_SEQ, BatchLimitError, HELD_SEQ } from '../batch-types.js';
import type { BatchCounts, BatchJobsQuery, BatchLimits, BatchRecord, BatchStatus } from '../batch-types.js';
import { BATCH_INSERT_COLUMNS, batchValues, toBatch, toCounts, type BatchRow } from '../batch-row.js';
import type { JobRecord, RetentionPolicy, WebhookDelivery } from '../types.js';
import { JOB_COLUMNS, insertParams, toRecord, type RawJobRow } from './rows.js';
import type { SqliteCore } from './sqlite-core.js';

const RETAIN = `:now + CASE WHEN sync = 1 THEN :keep_sync ELSE :keep_async END`;

/**
 * The SQLite store's batch operations, synchronous, each run inside the store's group commit by `SqliteStore`
 * (`BatchStore` in batch-types.ts). Held jobs take queue positions from `HELD_SEQ`, released ones from `BATCH_SEQ`
 * (the same offset), so the claim statement takes them after every interactive job and never a held one.
 */
export class SqliteBatches {
  private readonly st: Record<string, Statement>;
  /** The next batch queue offset (positions `HELD_SEQ + k`, `BATCH_SEQ + k` once released). */
  private nextSeq: number;

  constructor(private readonly core: SqliteCore) {
    const db = core.db;
    const p = (sql: string) => db.prepare(sql);
    const jobs = (sql: string) => db.prepare(sql).raw(true);
    this.st = {
      insertBatch: p(`INSERT INTO batches (${BATCH_INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`),
      insertJob:
        p(`INSERT INTO jobs (id, endpoint_id, status, input, webhook, s3_config, execution_timeout, low_priority, sync, attempt,
        retries, worker_id, output, progress, error, created_at, queued_at, started_at, finished_at, expires_at, execution_deadline,
        retain_until, lease_until, cost, queue_seq, batch_id)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      get: p(`SELECT * FROM batches WHERE id = ?`),
      list: p(`SELECT * FROM batches WHERE endpoint_id = :ep AND (:at IS NULL OR (created_at, id) < (:at, :id))
        ORDER BY created_at DESC, id DESC LIMIT :limit`),
      rename: p(`UPDATE batches SET name = ? WHERE id = ? RETURNING *`),
      addTotal: p(`UPDATE batches SET total = total + ? WHERE id = ? RETURNING *`),
      finalize: p(
        `UPDATE batches SET status = 'FINALIZED', finalized_at = ? WHERE id = ? AND status = 'DRAFT' RETURNING *`,
      ),
      cancel: p(`UPDATE batches SET status = 'CANCELLED' WHERE id = ? AND status IN ('DRAFT', 'FINALIZED')
        AND finished_at IS NULL RETURNING *`),
      end: p(`UPDATE batches SET finished_at = ?, status = ? WHERE id = ? AND finished_at IS NULL RETURNING *`),
      unended: p(`SELECT * FROM batches WHERE finished_at IS NULL AND status IN ('FINALIZED', 'CANCELLED') LIMIT ?`),
      ended: p(`SELECT * FROM batches WHERE finished_at <= ? LIMIT ?`),
      dropBatch: p(`DELETE FROM batches WHERE id = ?`),
      openCount: p(`SELECT count(*) AS n FROM batches WHERE endpoint_id = ? AND finished_at IS NULL`),
      queuedCount: p(
        `SELECT count(*) AS n FROM jobs WHERE endpoint_id = ? AND status = 'IN_QUEUE' AND queue_seq >= ${BATCH_SEQ}`,
      ),
      // Through jobs_queue: the endpoint's held jobs in position order, those of this batch.
      release: p(`UPDATE jobs SET queue_seq = queue_seq - ${HELD_SEQ - BATCH_SEQ} WHERE rowid IN (
        SELECT rowid FROM jobs WHERE endpoint_id = :ep AND status = 'IN_QUEUE' AND queue_seq >= ${HELD_SEQ} AND batch_id = :id
        ORDER BY queue_seq LIMIT :limit)`),
      cancelJobs:
        p(`UPDATE jobs SET status = 'CANCELLED', finished_at = :now, retain_until = ${RETAIN}, queue_seq = NULL
        WHERE rowid IN (SELECT rowid FROM jobs WHERE endpoint_id = :ep AND status = 'IN_QUEUE' AND queue_seq >= :lo
          AND queue_seq < :hi AND batch_id = :id LIMIT :limit) RETURNING id`),
      counts: p(`SELECT status, count(*) AS n FROM jobs WHERE batch_id = ? GROUP BY status`),
      page: jobs(`SELECT ${JOB_COLUMNS} FROM jobs WHERE batch_id = ? AND id > ? ORDER BY id LIMIT ? OFFSET ?`),
      running: jobs(`SELECT ${JOB_COLUMNS} FROM jobs WHERE batch_id = ? AND status = 'IN_PROGRESS' LIMIT ?`),
      live: p(`SELECT 1 FROM jobs WHERE batch_id = ? AND status IN ('IN_QUEUE', 'IN_PROGRESS') LIMIT 1`),
      someIds: p(`SELECT id FROM jobs WHERE batch_id = ? LIMIT ?`),
      maxSeq:
        p(`SELECT max(CASE WHEN queue_seq >= ${HELD_SEQ} THEN queue_seq - ${HELD_SEQ} ELSE queue_seq - ${BATCH_SEQ} END)
        AS m FROM jobs WHERE queue_seq >= ${BATCH_SEQ}`),
    };
    this.nextSeq = ((this.st.maxSeq!.get() as { m: number | null }).m ?? 0) + 1;
  }

  private batchRow(stmt: Statement, ...params: unknown[]): BatchRecord | undefined {
    const r = stmt.get(...params) as BatchRow | undefined;
    return r && toBatch(r);
  }

  private checkLimits(endpointId: string, adding: number, limits: BatchLimits, newBatch: boolean): void {
    if (newBatch) {
      const open = (this.st.openCount!.get(endpointId) as { n: number }).n;
      if (open >= limits.maxOpen) throw new BatchLimitError('maxOpen', open);
    }
    if (adding === 0) return;
    const queued = (this.st.queuedCount!.get(endpointId) as { n: number }).n;
    if (queued + adding > limits.maxQueued) throw new BatchLimitError('maxQueued', queued);
  }

  /** Inserts held jobs (no live count: they cannot be claimed until released). */
  private insertHeld(batchId: string, jobs: JobRecord[]): void {
    for (const job of jobs) {
      const params = insertParams(job, HELD_SEQ + this.nextSeq++, this.core.big);
      params.push(batchId);
      this.st.insertJob!.run(params);
    }
  }

  createBatch(batch: BatchRecord, jobs: JobRecord[], limits: BatchLimits): void {
    this.checkLimits(batch.endpointId, jobs.length, limits, true);
    this.st.insertBatch!.run(batchValues({ ...batch, total: jobs.length }));
    this.insertHeld(batch.id, jobs);
  }

  getBatch(id: string): BatchRecord | undefined {
    return this.batchRow(this.st.get!, id);
  }

  listBatches(endpointId: string, limit: number, after?: { createdAt: number; id: string }): BatchRecord[] {
    const rows = this.st.list!.all({
      ep: endpointId,
      at: after?.createdAt ?? null,
      id: after?.id ?? null,
      limit,
    }) as BatchRow[];
    return rows.map(toBatch);
  }

  renameBatch(id: string, name: string | undefined): BatchRecord | undefined {
    return this.batchRow(this.st.rename!, name ?? null, id);
  }

  addToBatch(id: string, jobs: JobRecord[], limits: BatchLimits): BatchRecord | 'not_draft' | undefined {
    const b = this.getBatch(id);
    if (!b) return undefined;
    if (b.status !== 'DRAFT') return 'not_draft';
    this.checkLimits(b.endpointId, jobs.length, limits, false);
    this.insertHeld(id, jobs);
    return this.batchRow(this.st.addTotal!, jobs.length, id);
  }

  removeFromBatch(id: string, jobId: string): boolean | 'not_draft' {
    const b = this.getBatch(id);
    if (!b) return false;
    if (b.status !== 'DRAFT') return 'not_draft';
    const job = this.core.get(jobId);
    if (job?.batchId !== id || !this.core.delete(jobId)) return false;
    this.st.addTotal!.run(-1, id);
    return true;
  }

  finalizeBatch(id: string, now: number): BatchRecord | undefined {
    return this.batchRow(this.st.finalize!, now, id);
  }

  releaseBatch(id: string, limit: number): number {
    const b = this.getBatch(id);
    if (b?.status !== 'FINALIZED') return 0;
    const n = this.st.release!.run({ ep: b.endpointId, id, limit }).changes;
    for (let i = 0; i < n; i++) this.core.live.moved(b.endpointId, undefined, 'IN_QUEUE');
    return n;
  }

  cancelBatch(id: string): BatchRecord | undefined {
    return this.batchRow(this.st.cancel!, id);
  }

  cancelBatchJobs(id: string, now: number, retention: RetentionPolicy, limit: number): string[] {
    const b = this.getBatch(id);
    if (!b) return [];
    const run = (lo: number, hi: number, max: number) =>
      (
        this.st.cancelJobs!.all({
          ep: b.endpointId,
          id,
          lo,
          hi,
          limit: max,
          now,
          keep_sync: retention.sync,
          keep_async: retention.async,
        }) as { id: string }[]
      ).map((r) => r.id);
    const held = run(HELD_SEQ, Number.MAX_SAFE_INTEGER, limit);
    const queued = held.length < limit ? run(BATCH_SEQ, HELD_SEQ, limit - held.length) : [];
    for (let i = 0; i < queued.length; i++) this.core.live.moved(b.endpointId, 'IN_QUEUE', 'CANCELLED');
    return [...held, ...queued];
  }

  batchCounts(id: string): BatchCounts {
    return toCounts(this.st.counts!.all(id) as { status: string; n: number }[]);
  }

  batchJobs(id: string, q: BatchJobsQuery): JobRecord[] {
    return (this.st.page!.all(id, q.after ?? '', q.limit, q.offset ?? 0) as RawJobRow[]).map((r) =>
      toRecord(r, this.core.big),
    );
  }

  runningBatchJobs(id: string, limit: number): JobRecord[] {
    return (this.st.running!.all(id, limit) as RawJobRow[]).map((r) => toRecord(r, this.core.big));
  }

  batchLive(id: string): boolean {
    return this.st.live!.get(id) !== undefined;
  }

  endBatch(
    id: string,
    now: number,
    status: BatchStatus,
    delivery: WebhookDelivery | undefined,
  ): BatchRecord | undefined {
    const b = this.batchRow(this.st.end!, now, status, id);
    if (b && delivery) this.core.enqueueWebhook(delivery);
    return b;
  }

  unendedBatches(limit: number): BatchRecord[] {
    return (this.st.unended!.all(limit) as BatchRow[]).map(toBatch);
  }

  endedBatches(before: number, limit: number): BatchRecord[] {
    return (this.st.ended!.all(before, limit) as BatchRow[]).map(toBatch);
  }

  deleteBatch(id: string, limit: number): boolean {
    const ids = (this.st.someIds!.all(id, limit) as { id: string }[]).map((r) => r.id);
    for (const jobId of ids) this.core.delete(jobId);
    if (ids.length === limit) return false;
    this.st.dropBatch!.run(id);
    this.core.dropDeliveriesOf(id);
    return true;
  }
}
