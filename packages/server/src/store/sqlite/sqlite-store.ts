import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Database, Statement } from 'better-sqlite3';
import { isTerminal, type JobStatus } from '@berth/protocol';
import type { DeleteCondition, DueJobs, EndpointCounts, FinishPatch, JobLog, JobLogLine, JobRecord, RecoveryReport, RetentionPolicy, Store, WebhookAttempt, WebhookDelivery } from '../types.js';
import { DuplicateJobError } from '../../errors.js';
import { DataLock } from './data-lock.js';
import { GroupCommit } from './group-commit.js';
import { WalSync } from './wal-sync.js';
import { LiveCounts } from './live-counts.js';
import { insertParams, json, toRecord, type JobRow } from './rows.js';
import { openStoreDatabase } from './open-database.js';
import { prepareStatements, type Statements } from './statements.js';
import { SqliteWebhookOutbox } from './webhook-outbox.js';
import { SqliteJobLogs } from './job-logs.js';

/** Options of `SqliteStore`. */
export interface SqliteStoreOptions {
  /** Database file (created with its folder). `:memory:` for a private in-memory database. */
  file: string;
  /**
   * `normal` (default): WAL with `synchronous=NORMAL`, a commit survives a process crash (kill -9) but the last
   * commits may be lost on power loss. `full`: `synchronous=FULL`, every commit is fsynced. CLI: `--durability`.
   */
  durability?: 'normal' | 'full';
}

/**
 * The embedded durable store (better-sqlite3, WAL). One connection, writes grouped per event-loop turn
 * (`GroupCommit`). Queued jobs live only in the database: memory does not grow with the queue; the few
 * counters kept in memory (queued and running per endpoint, the next queue position) are rebuilt from the
 * database on open and after a rolled-back batch.
 */
export class SqliteStore implements Store {
  /** One connection, one batch per turn: a stream reader woken as a chunk is written takes it in that commit. */
  readonly sharesTurnCommit = true;
  readonly db: Database;
  private readonly st: Statements;
  private readonly tx: GroupCommit;
  private readonly outbox: SqliteWebhookOutbox;
  private readonly jobLogs: SqliteJobLogs;
  private readonly live: LiveCounts;
  private closed = false;
  private readonly lock: DataLock | undefined;
  private readonly walSync: WalSync | undefined;

  constructor(opts: SqliteStoreOptions) {
    if (opts.file !== ':memory:') {
      mkdirSync(dirname(opts.file), { recursive: true });
      this.lock = DataLock.acquire(opts.file);
    }
    // Durability full on a file: SQLite writes the WAL, `WalSync` fsyncs it off the event loop (group-commit.ts).
    const ownSync = opts.durability === 'full' && opts.file !== ':memory:';
    let db: Database | undefined;
    try {
      db = openStoreDatabase(opts.file, opts.durability ?? 'normal', ownSync);
      if (ownSync) this.walSync = new WalSync(`${opts.file}-wal`);
    } catch (err) {
      db?.close();
      this.lock?.release();
      throw err;
    }
    this.db = db;
    this.st = prepareStatements(this.db);
    this.outbox = new SqliteWebhookOutbox(this.db);
    this.jobLogs = new SqliteJobLogs(this.db);
    this.live = new LiveCounts(this.st);
    this.tx = new GroupCommit(this.db, () => this.live.rebuild(), this.walSync);
  }

  /** Batches committed so far (each is one transaction holding every write of an event-loop turn). */
  get commits(): number {
    return this.tx.commits;
  }

  /** WAL fsyncs done off the event loop so far (durability `full` on a file; 0 otherwise). */
  get walSyncs(): number {
    return this.walSync?.syncs ?? 0;
  }

  private stat(endpointId: string, column: 'completed' | 'failed' | 'retried'): void {
    this.st.bumpStat[column].run(endpointId);
  }

  private row(stmt: Statement, ...params: unknown[]): JobRecord | undefined {
    const r = stmt.get(...params) as JobRow | undefined;
    return r ? toRecord(r) : undefined;
  }

  private alive(): void {
    if (this.closed) throw new Error('the store is closed');
  }

  insert(job: JobRecord): Promise<void> {
    this.alive();
    return this.tx.write(() => {
      const seq = job.status === 'IN_QUEUE' ? this.live.nextSeq++ : null;
      try {
        this.st.insert.run(insertParams(job, seq));
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new DuplicateJobError(job.id);
        throw err;
      }
      this.live.moved(job.endpointId, undefined, job.status);
      if (job.status === 'COMPLETED') this.stat(job.endpointId, 'completed');
      if (job.status === 'FAILED' || job.status === 'TIMED_OUT') this.stat(job.endpointId, 'failed');
      if (isTerminal(job.status)) this.outbox.added(job, job.finishedAt ?? job.createdAt); // stored already terminal
    });
  }

  get(id: string): Promise<JobRecord | undefined> {
    this.alive();
    return this.tx.read(() => this.row(this.st.get, id));
  }

  claim(endpointId: string, workerId: string, now: number): Promise<JobRecord | undefined> {
    this.alive();
    // An empty queue (the counters include the open batch) needs no transaction: nothing to claim.
    if (this.live.queued(endpointId) === 0) return Promise.resolve(undefined);
    return this.tx.write(() => {
      const job = this.row(this.st.claim, { worker_id: workerId, now, endpoint_id: endpointId });
      if (job) this.live.moved(endpointId, 'IN_QUEUE', 'IN_PROGRESS');
      return job;
    });
  }

  finish(id: string, attempt: number, patch: FinishPatch, now: number, retention: RetentionPolicy): Promise<JobRecord | undefined> {
    this.alive();
    return this.tx.write(() => {
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
      this.live.moved(job.endpointId, 'IN_PROGRESS', job.status);
      this.stat(job.endpointId, job.status === 'COMPLETED' ? 'completed' : 'failed');
      this.outbox.added(job, now);
      return job;
    });
  }

  cancel(id: string, now: number, retention: RetentionPolicy): Promise<{ before: JobRecord; after: JobRecord } | undefined> {
    this.alive();
    return this.tx.write(() => {
      const before = this.row(this.st.get, id);
      if (!before || (before.status !== 'IN_QUEUE' && before.status !== 'IN_PROGRESS')) return undefined;
      const after = this.row(this.st.cancel, { id, now, keep_sync: retention.sync, keep_async: retention.async });
      if (!after) return undefined;
      this.live.moved(after.endpointId, before.status, 'CANCELLED');
      this.outbox.added(after, now);
      return { before, after };
    });
  }

  retry(id: string, now: number): Promise<JobRecord | undefined> {
    this.alive();
    return this.tx.write(() => {
      const job = this.row(this.st.retry, { id, now, seq: this.live.nextSeq });
      if (!job) return undefined;
      this.live.nextSeq++;
      this.st.dropChunks.run(id);
      this.live.moved(job.endpointId, 'FAILED', 'IN_QUEUE');
      this.stat(job.endpointId, 'retried');
      return job;
    });
  }

  requeue(id: string, attempt: number, now: number, maxAttempts: number, failError: string, retention: RetentionPolicy): Promise<JobRecord | undefined> {
    this.alive();
    return this.tx.write(() => {
      if (attempt >= maxAttempts) {
        const job = this.row(this.st.finish, { id, attempt, status: 'FAILED', output: null, error: failError, now, keep_sync: retention.sync, keep_async: retention.async });
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
    });
  }

  setProgress(id: string, attempt: number, progress: unknown): Promise<boolean> {
    this.alive();
    return this.tx.write(() => this.st.setProgress.run({ id, attempt, progress: json(progress) }).changes > 0);
  }

  appendStream(id: string, attempt: number, seq: number, chunks: unknown[]): Promise<number> {
    this.alive();
    return this.tx.write(() => {
      const r = this.st.streamLen.get(id, attempt) as { stream_len: number } | undefined;
      if (!r || seq > r.stream_len) return 0; // not running, or a gap: refuse out-of-order data
      const fresh = chunks.slice(r.stream_len - seq);
      let at = r.stream_len;
      for (const c of fresh) this.st.addChunk.run(id, at++, JSON.stringify(c) ?? 'null');
      if (fresh.length) this.st.setStreamLen.run(at, id);
      return fresh.length;
    });
  }

  takeStream(id: string): Promise<unknown[]> {
    this.alive();
    const state = () => this.st.streamState.get(id) as { stream_len: number; stream_taken: number } | undefined;
    const pending = state();
    // A reader polling a stream with nothing new (the common case) reads; only taking chunks is a write.
    if (!pending || pending.stream_taken >= pending.stream_len) return this.tx.read(() => []);
    return this.tx.write(() => {
      const r = state();
      if (!r || r.stream_taken >= r.stream_len) return [];
      const rows = this.st.chunksFrom.all(id, r.stream_taken) as { data: string }[];
      this.st.setStreamTaken.run(r.stream_len, id);
      this.st.dropChunksBelow.run(id, r.stream_len);
      return rows.map((x) => JSON.parse(x.data) as unknown);
    });
  }

  setLease(id: string, attempt: number, until: number | null): Promise<boolean> {
    this.alive();
    return this.tx.write(() => this.st.setLease.run({ id, attempt, until }).changes > 0);
  }

  runningOn(workerId: string): Promise<JobRecord[]> {
    this.alive();
    return this.tx.read(() => (this.st.runningOn.all(workerId) as JobRow[]).map(toRecord));
  }

  setExpiry(id: string, expiresAt: number): Promise<boolean> {
    this.alive();
    return this.tx.write(() => this.st.setExpiry.run(expiresAt, id).changes > 0);
  }

  purgeQueue(endpointId: string): Promise<string[]> {
    this.alive();
    return this.tx.write(() => {
      const ids = (this.st.purge.all(endpointId) as { id: string }[]).map((r) => r.id);
      for (const id of ids) {
        this.st.dropChunks.run(id);
        this.outbox.jobDeleted(id);
        this.jobLogs.jobDeleted(id);
      }
      this.live.purged(endpointId, ids.length);
      return ids;
    });
  }

  delete(id: string, cond?: DeleteCondition): Promise<boolean> {
    this.alive();
    return this.tx.write(() => {
      const r = this.st.deleteIf.get({ id, expires_at: cond?.expiresAt ?? null, retain_until: cond?.retainUntil ?? null }) as
        | { endpoint_id: string; status: JobStatus }
        | undefined;
      if (!r) return false;
      this.st.dropChunks.run(id);
      this.live.moved(r.endpoint_id, r.status, undefined);
      this.outbox.jobDeleted(id);
      this.jobLogs.jobDeleted(id);
      return true;
    });
  }

  due(now: number, limit: number): Promise<DueJobs> {
    this.alive();
    return this.tx.read(() => {
      const all = (s: Statement) => (s.all(now, limit) as JobRow[]).map(toRecord);
      return { expired: all(this.st.dueExpired), timedOut: all(this.st.dueTimedOut), retained: all(this.st.dueRetained), leaseExpired: all(this.st.dueLease) };
    });
  }

  counts(endpointId: string): Promise<EndpointCounts> {
    this.alive();
    return this.tx.read(() => {
      const s = (this.st.stats.get(endpointId) as { completed: number; failed: number; retried: number } | undefined) ?? { completed: 0, failed: 0, retried: 0 };
      return { completed: s.completed, failed: s.failed, retried: s.retried, inProgress: this.live.running(endpointId), inQueue: this.live.queued(endpointId) };
    });
  }

  queueDepth(endpointId: string): Promise<number> {
    return Promise.resolve(this.live.queued(endpointId));
  }

  recover(leaseUntil: number): Promise<RecoveryReport> {
    this.alive();
    return this.tx.write(() => {
      this.st.leaseOrphans.run(leaseUntil);
      const { queued, running } = this.live.totals();
      const endpoints = (this.st.endpoints.all() as { endpoint_id: string }[]).map((r) => r.endpoint_id);
      return { queued, running, endpoints };
    });
  }

  claimWebhooks(now: number, limit: number, leaseUntil: number): Promise<WebhookDelivery[]> {
    this.alive();
    return this.tx.write(() => this.outbox.claim(now, limit, leaseUntil));
  }

  recordWebhookAttempt(deliveryId: string, attempt: WebhookAttempt, nextAttemptAt: number | null): Promise<boolean> {
    this.alive();
    return this.tx.write(() => this.outbox.record(deliveryId, attempt, nextAttemptAt));
  }

  webhookDeliveries(jobId: string): Promise<WebhookDelivery[]> {
    this.alive();
    return this.tx.read(() => this.outbox.forJob(jobId));
  }

  appendLogs(id: string, lines: JobLogLine[]): Promise<number> {
    this.alive();
    return lines.length === 0 ? this.tx.read(() => 0) : this.tx.write(() => this.jobLogs.append(id, lines));
  }

  logs(id: string): Promise<JobLog | undefined> {
    this.alive();
    return this.tx.read(() => this.jobLogs.get(id));
  }

  recent(endpointId: string, limit: number): Promise<JobRecord[]> {
    this.alive();
    return this.tx.read(() => this.jobLogs.recent(endpointId, limit));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tx.settle();
    this.walSync?.close();
    this.db.close();
    this.lock?.release();
  }
}
