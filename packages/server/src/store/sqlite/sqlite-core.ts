import type { Database, Statement } from 'better-sqlite3';
import { isTerminal, type JobStatus } from '@berth/protocol';
import type {
  ClaimLane,
  DeleteCondition,
  DueJobs,
  EndpointCounts,
  FinishPatch,
  JobLog,
  JobLogLine,
  JobListQuery,
  JobRecord,
  RecoveryReport,
  RequeueOptions,
  RetentionPolicy,
  WebhookAttempt,
  WebhookDelivery,
  StreamSlice,
} from '../types.js';
import { DuplicateJobError } from '../../errors.js';
import { LiveCounts } from './live-counts.js';
import { insertParams, json, toRecord, type RawJobRow } from './rows.js';
import { prepareStatements, type Statements } from './statements.js';
import { SqliteWebhookOutbox } from './webhook-outbox.js';
import { SqliteJobLogs } from './job-logs.js';
import { BigInputs } from './big-inputs.js';
import { BATCH_SEQ, HELD_SEQ } from '../batch-types.js';

/**
 * The SQLite store's operations, synchronous, on one connection. The caller runs each inside a transaction and
 * answers only after the COMMIT (`SqliteStore` with `GroupCommit`). Same names and arguments as `Store`'s methods.
 */
export class SqliteCore {
  readonly st: Statements;
  readonly live: LiveCounts;
  private readonly outbox: SqliteWebhookOutbox;
  private readonly jobLogs: SqliteJobLogs;
  readonly big: BigInputs;

  constructor(
    readonly db: Database,
    blobDir?: string,
  ) {
    this.st = prepareStatements(db);
    this.big = new BigInputs(db, blobDir);
    this.outbox = new SqliteWebhookOutbox(db);
    this.jobLogs = new SqliteJobLogs(db, this.big);
    this.live = new LiveCounts(this.st);
  }

  private stat(endpointId: string, column: 'completed' | 'failed' | 'retried'): void {
    this.st.bumpStat[column].run(endpointId);
  }

  private row(stmt: Statement, ...params: unknown[]): JobRecord | undefined {
    const r = stmt.get(...params) as RawJobRow | undefined;
    return r ? toRecord(r, this.big) : undefined;
  }

  insert(job: JobRecord): void {
    const seq = job.status === 'IN_QUEUE' ? this.live.nextSeq++ : null;
    try {
      this.st.insert.run(insertParams(job, seq, this.big));
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
        throw new DuplicateJobError(job.id, { cause: err });
      throw err;
    }
    this.live.moved(job.endpointId, undefined, job.status);
    if (job.status === 'COMPLETED') this.stat(job.endpointId, 'completed');
    if (job.status === 'FAILED' || job.status === 'TIMED_OUT') this.stat(job.endpointId, 'failed');
    if (isTerminal(job.status)) this.outbox.added(job, job.finishedAt ?? job.createdAt); // stored already terminal
  }

  batchBacklog(endpointId: string): number {
    return (this.st.batchBacklog.get(endpointId) as { n: number }).n;
  }

  get(id: string): JobRecord | undefined {
    return this.row(this.st.get, id);
  }

  claim(endpointId: string, workerId: string, now: number, lane?: ClaimLane): JobRecord | undefined {
    if (this.live.queued(endpointId) === 0) return undefined;
    const job =
      lane === undefined
        ? this.row(this.st.claim, { worker_id: workerId, now, endpoint_id: endpointId })
        : this.row(this.st.claimRange, {
            worker_id: workerId,
            now,
            endpoint_id: endpointId,
            lo: lane === 'batch' ? BATCH_SEQ : 0,
            hi: lane === 'batch' ? HELD_SEQ : BATCH_SEQ,
          });
    if (job) this.live.moved(endpointId, 'IN_QUEUE', 'IN_PROGRESS');
    return job;
  }

  finish(
    id: string,
    attempt: number,
    patch: FinishPatch,
    now: number,
    retention: RetentionPolicy,
  ): JobRecord | undefined {
    const job = this.row(this.st.finish, {
      id,
      attempt,
      status: patch.status,
      output: patch.status === 'COMPLETED' ? json(patch.output) : null,
      error: patch.status === 'COMPLETED' ? null : patch.error,
      now,
      keep_sync: retention.sync,
      keep_async: retention.async,
    });
    if (!job) return undefined;
    // The statement returns the output only when it changed it (FINISH_COLUMNS): else it is the one just stored.
    if (patch.status === 'COMPLETED' && job.output === undefined) job.output = patch.output;
    this.live.moved(job.endpointId, 'IN_PROGRESS', job.status);
    this.stat(job.endpointId, job.status === 'COMPLETED' ? 'completed' : 'failed');
    this.outbox.added(job, now);
    return job;
  }

  cancel(id: string, now: number, retention: RetentionPolicy): { before: JobRecord; after: JobRecord } | undefined {
    const before = this.row(this.st.get, id);
    if (!before || (before.status !== 'IN_QUEUE' && before.status !== 'IN_PROGRESS')) return undefined;
    const after = this.row(this.st.cancel, { id, now, keep_sync: retention.sync, keep_async: retention.async });
    if (!after) return undefined;
    this.live.moved(after.endpointId, before.status, 'CANCELLED');
    this.outbox.added(after, now);
    return { before, after };
  }

  retry(id: string, now: number): JobRecord | undefined {
    const job = this.row(this.st.retry, { id, now, seq: this.live.nextSeq });
    if (!job) return undefined;
    this.live.nextSeq++;
    this.st.dropChunks.run(id);
    this.live.moved(job.endpointId, 'FAILED', 'IN_QUEUE');
    this.stat(job.endpointId, 'retried');
    return job;
  }

  requeue(id: string, { attempt, now, maxAttempts, failError, retention }: RequeueOptions): JobRecord | undefined {
    if (attempt >= maxAttempts) {
      const job = this.row(this.st.finish, {
        id,
        attempt,
        status: 'FAILED',
        output: null,
        error: failError,
        now,
        keep_sync: retention.sync,
        keep_async: retention.async,
      });
      if (!job) return undefined;
      this.live.moved(job.endpointId, 'IN_PROGRESS', 'FAILED');
      this.stat(job.endpointId, 'failed');
      this.outbox.added(job, now);
      return job;
    }
    const job = this.row(this.st.requeue, { id, attempt, seq: this.live.nextSeq });
    if (!job) return undefined;
    this.live.nextSeq++;
    this.st.dropChunks.run(id);
    this.live.moved(job.endpointId, 'IN_PROGRESS', 'IN_QUEUE');
    this.stat(job.endpointId, 'retried');
    return job;
  }

  setProgress(id: string, attempt: number, progress: unknown): boolean {
    return this.st.setProgress.run({ id, attempt, progress: json(progress) }).changes > 0;
  }

  appendStream(id: string, attempt: number, seq: number, chunks: unknown[]): number {
    const r = this.st.streamLen.get(id, attempt) as { stream_len: number } | undefined;
    if (!r || seq > r.stream_len) return 0; // not running, or a gap: refuse out-of-order data
    const fresh = chunks.slice(r.stream_len - seq);
    let at = r.stream_len;
    for (const c of fresh) this.st.addChunk.run(id, at++, JSON.stringify(c) ?? 'null');
    if (fresh.length) this.st.setStreamLen.run(at, id);
    return fresh.length;
  }

  /** True when `takeStream` would take something (a poll with nothing new needs no transaction). */
  streamPending(id: string): boolean {
    const r = this.st.streamState.get(id) as { stream_len: number; stream_taken: number } | undefined;
    return !!r && r.stream_taken < r.stream_len;
  }

  takeStream(id: string): unknown[] {
    const r = this.st.streamState.get(id) as { stream_len: number; stream_taken: number } | undefined;
    if (!r || r.stream_taken >= r.stream_len) return [];
    const rows = this.st.chunksFrom.all(id, r.stream_taken) as { data: string }[];
    this.st.setStreamTaken.run(r.stream_len, id);
    this.st.dropChunksBelow.run(id, r.stream_len);
    return rows.map((x) => JSON.parse(x.data) as unknown);
  }

  readStream(id: string, from: number): StreamSlice | undefined {
    const r = this.st.streamHead.get(id) as { attempt: number; stream_len: number; stream_taken: number } | undefined;
    if (!r) return undefined;
    const start = Math.max(from, r.stream_taken);
    if (start >= r.stream_len) return { attempt: r.attempt, from: start, chunks: [] };
    const rows = this.st.chunksFrom.all(id, start) as { data: string }[];
    return {
      attempt: r.attempt,
      from: start,
      chunks: rows.slice(0, r.stream_len - start).map((x) => JSON.parse(x.data) as unknown),
    };
  }

  setLease(id: string, attempt: number, until: number | null): boolean {
    return this.st.setLease.run({ id, attempt, until }).changes > 0;
  }

  runningOn(workerId: string): JobRecord[] {
    return (this.st.runningOn.all(workerId) as RawJobRow[]).map((r) => toRecord(r, this.big));
  }

  setExpiry(id: string, expiresAt: number): boolean {
    return this.st.setExpiry.run(expiresAt, id).changes > 0;
  }

  purgeQueue(endpointId: string): string[] {
    const ids = (this.st.purge.all(endpointId) as { id: string }[]).map((r) => r.id);
    for (const id of ids) {
      this.st.dropChunks.run(id);
      this.outbox.jobDeleted(id);
      this.jobLogs.jobDeleted(id);
    }
    this.live.purged(endpointId, ids.length);
    return ids;
  }

  delete(id: string, cond?: DeleteCondition): boolean {
    const r = this.st.deleteIf.get({
      id,
      expires_at: cond?.expiresAt ?? null,
      retain_until: cond?.retainUntil ?? null,
    }) as { endpoint_id: string; status: JobStatus; queue_seq: number | null } | undefined;
    if (!r) return false;
    this.st.dropChunks.run(id);
    if (r.queue_seq === null || r.queue_seq < HELD_SEQ) this.live.moved(r.endpoint_id, r.status, undefined);
    this.outbox.jobDeleted(id);
    this.jobLogs.jobDeleted(id);
    return true;
  }

  due(now: number, limit: number): DueJobs {
    const all = (s: Statement) => (s.all(now, limit) as RawJobRow[]).map((r) => toRecord(r, this.big));
    return {
      expired: all(this.st.dueExpired),
      timedOut: all(this.st.dueTimedOut),
      retained: (this.st.dueRetained.all(now, limit) as { id: string; retain_until: number }[]).map((r) => ({
        id: r.id,
        retainUntil: r.retain_until,
      })),
      leaseExpired: all(this.st.dueLease),
    };
  }

  counts(endpointId: string): EndpointCounts {
    const s = (this.st.stats.get(endpointId) as { completed: number; failed: number; retried: number } | undefined) ?? {
      completed: 0,
      failed: 0,
      retried: 0,
    };
    return {
      completed: s.completed,
      failed: s.failed,
      retried: s.retried,
      inProgress: this.live.running(endpointId),
      inQueue: this.live.queued(endpointId),
    };
  }

  recover(leaseUntil: number): RecoveryReport {
    this.st.leaseOrphans.run({ until: leaseUntil });
    const { queued, running } = this.live.totals();
    const endpoints = (this.st.endpoints.all() as { endpoint_id: string }[]).map((r) => r.endpoint_id);
    return { queued, running, endpoints };
  }

  enqueueWebhook(d: WebhookDelivery): void {
    this.outbox.enqueue(d);
  }

  /** A batch was deleted: its finished deliveries go (like a deleted job's). */
  dropDeliveriesOf(id: string): void {
    this.outbox.jobDeleted(id);
  }

  claimWebhooks(now: number, limit: number, leaseUntil: number): WebhookDelivery[] {
    return this.outbox.claim(now, limit, leaseUntil);
  }

  recordWebhookAttempt(deliveryId: string, attempt: WebhookAttempt, nextAttemptAt: number | null): boolean {
    return this.outbox.record(deliveryId, attempt, nextAttemptAt);
  }

  webhookDeliveries(jobId: string): WebhookDelivery[] {
    return this.outbox.forJob(jobId);
  }

  appendLogs(id: string, lines: JobLogLine[]): number {
    return lines.length === 0 ? 0 : this.jobLogs.append(id, lines);
  }

  logs(id: string): JobLog | undefined {
    return this.jobLogs.get(id);
  }

  listJobs(endpointId: string, q: JobListQuery): JobRecord[] {
    return this.jobLogs.page(endpointId, q);
  }

  recent(endpointId: string, limit: number): JobRecord[] {
    return this.jobLogs.recent(endpointId, limit);
  }
}
