import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Database } from 'better-sqlite3';
import type {
  ClaimLane,
  DeleteCondition,
  DueJobs,
  EndpointCounts,
  FinishPatch,
  JobLog,
  JobListQuery,
  JobLogLine,
  JobRecord,
  RecoveryReport,
  RequeueOptions,
  RetentionPolicy,
  Store,
  WebhookAttempt,
  WebhookDelivery,
  StreamSlice,
} from '../types.js';
import { DataLock } from './data-lock.js';
import { GroupCommit } from './group-commit.js';
import { WalSync } from './wal-sync.js';
import { openStoreDatabase, WAL_BACKSTOP_PAGES } from './open-database.js';
import { Checkpointer } from './checkpointer.js';
import { SqliteCore } from './sqlite-core.js';
import { SqliteQueuePositions } from './queue-position.js';
import { SqliteBatches } from './batches.js';
import { sqliteBatchStore } from './batch-store.js';
import type { BatchStore } from '../batch-types.js';

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
 * (`GroupCommit`).
 * Queued jobs live only in the database: memory does not grow with the queue; the few counters kept in memory
 * (queued and running per endpoint, the next queue position) are rebuilt from the database on open and after a
 * rolled-back batch.
 */
export class SqliteStore implements Store {
  /** One batch per turn: a stream reader woken as a chunk is written takes it in that commit. */
  readonly sharesTurnCommit = true;
  /** The store's connection; what shares the file outside the job tables (the API keys) uses it too. */
  readonly db: Database;
  /** The operations, and the batches they run in. */
  private readonly core: SqliteCore;
  private readonly tx: GroupCommit;
  private closed = false;
  private readonly lock: DataLock | undefined;
  private readonly walSync: WalSync | undefined;
  private readonly checkpointer: Checkpointer | undefined;
  private positions: SqliteQueuePositions | undefined;
  /** The folder of big inputs and outputs (`blobs/` beside the database file); undefined in memory. */
  readonly blobDir: string | undefined;
  /** `full` durability fsyncs blob files before the job that refers to them commits. */
  readonly durability: 'normal' | 'full';
  readonly batches: BatchStore;

  constructor(opts: SqliteStoreOptions) {
    if (opts.file !== ':memory:') {
      mkdirSync(dirname(opts.file), { recursive: true });
      this.lock = DataLock.acquire(opts.file);
    }
    const durability = opts.durability ?? 'normal';
    this.durability = durability;
    this.blobDir = opts.file === ':memory:' ? undefined : join(dirname(opts.file), 'blobs');
    // Durability full on a file: SQLite writes the WAL, `WalSync` fsyncs it off the event loop (group-commit.ts).
    const ownSync = durability === 'full' && opts.file !== ':memory:';
    let db: Database | undefined;
    try {
      db = openStoreDatabase(opts.file, durability, ownSync);
      if (ownSync) this.walSync = new WalSync(`${opts.file}-wal`);
      else if (opts.file !== ':memory:') {
        // Durability normal: checkpoints on a worker thread; the store's own stays as a backstop (checkpointer.ts).
        db.pragma(`wal_autocheckpoint = ${WAL_BACKSTOP_PAGES}`);
        this.checkpointer = new Checkpointer(opts.file);
      }
    } catch (err) {
      void this.checkpointer?.close();
      db?.close();
      this.lock?.release();
      throw err;
    }
    this.db = db;
    const core = new SqliteCore(db, this.blobDir);
    this.core = core;
    this.tx = new GroupCommit(db, () => core.live.rebuild(), this.walSync);
    const batches = new SqliteBatches(core);
    this.batches = sqliteBatchStore(
      (op) => this.write(() => op(batches)),
      (op) => this.read(() => op(batches)),
    );
  }

  /** Batches committed so far (each is one transaction holding every write of an event-loop turn). */
  get commits(): number {
    return this.tx.commits;
  }

  /** WAL fsyncs done off the event loop so far (durability `full` on a file; 0 otherwise). */
  get walSyncs(): number {
    return this.walSync?.syncs ?? 0;
  }

  private alive(): void {
    if (this.closed) throw new Error('the store is closed');
  }

  /** A write: runs in the open batch and settles after the batch's COMMIT. */
  private write<T>(op: (core: SqliteCore) => T, oneStatement = false, early = false): Promise<T> {
    this.alive();
    return this.tx.write(() => op(this.core), oneStatement, early);
  }

  /** A read: waits for the open batch (nothing uncommitted is shown early). */
  private read<T>(op: (core: SqliteCore) => T): Promise<T> {
    this.alive();
    return this.tx.read(() => op(this.core));
  }

  /**
   * Durability `full`: a `/runsync` insert and a claim settle at their COMMIT, before the fsync (nobody
   * was told of them yet: the client is answered with the result, whose write waits for an fsync that covers them
   * too, or after `flush`). Safe from a crash of the process at once, from a power loss after the next fsync.
   */
  insert(job: JobRecord): Promise<void> {
    // A queued job is one INSERT (a job stored already terminal also bumps counters and the webhook outbox).
    return this.write((c) => c.insert(job), job.status === 'IN_QUEUE', job.sync);
  }

  /** Makes every write so far survive a power loss (durability `full`; at once otherwise): see `insert`. */
  flush(): Promise<void> {
    this.alive();
    return this.tx.sync();
  }

  get(id: string): Promise<JobRecord | undefined> {
    return this.read((c) => c.get(id));
  }

  /** The counters include the open batch. */
  surelyEmpty(endpointId: string): boolean {
    return this.core.live.queued(endpointId) === 0;
  }

  claim(endpointId: string, workerId: string, now: number, lane?: ClaimLane): Promise<JobRecord | undefined> {
    // An empty queue needs no transaction: nothing to claim.
    if (this.surelyEmpty(endpointId)) {
      this.alive();
      return Promise.resolve(undefined);
    }
    // One UPDATE; settles at its COMMIT (see `insert`).
    return this.write((c) => c.claim(endpointId, workerId, now, lane), true, true);
  }

  finish(
    id: string,
    attempt: number,
    patch: FinishPatch,
    now: number,
    retention: RetentionPolicy,
  ): Promise<JobRecord | undefined> {
    return this.write((c) => c.finish(id, attempt, patch, now, retention));
  }

  cancel(
    id: string,
    now: number,
    retention: RetentionPolicy,
  ): Promise<{ before: JobRecord; after: JobRecord } | undefined> {
    return this.write((c) => c.cancel(id, now, retention));
  }

  retry(id: string, now: number): Promise<JobRecord | undefined> {
    return this.write((c) => c.retry(id, now));
  }

  requeue(id: string, o: RequeueOptions): Promise<JobRecord | undefined> {
    return this.write((c) => c.requeue(id, o));
  }

  setProgress(id: string, attempt: number, progress: unknown): Promise<boolean> {
    return this.write((c) => c.setProgress(id, attempt, progress));
  }

  appendStream(id: string, attempt: number, seq: number, chunks: unknown[]): Promise<number> {
    return this.write((c) => c.appendStream(id, attempt, seq, chunks));
  }

  takeStream(id: string): Promise<unknown[]> {
    // A reader polling a stream with nothing new (the common case) reads; only taking chunks is a write.
    if (!this.core.streamPending(id)) return this.tx.read(() => []);
    return this.write((c) => c.takeStream(id));
  }

  readStream(id: string, from: number): Promise<StreamSlice | undefined> {
    return this.read((c) => c.readStream(id, from));
  }

  setLease(id: string, attempt: number, until: number | null): Promise<boolean> {
    return this.write((c) => c.setLease(id, attempt, until));
  }

  runningOn(workerId: string): Promise<JobRecord[]> {
    return this.read((c) => c.runningOn(workerId));
  }

  setExpiry(id: string, expiresAt: number): Promise<boolean> {
    return this.write((c) => c.setExpiry(id, expiresAt));
  }

  purgeQueue(endpointId: string): Promise<string[]> {
    return this.write((c) => c.purgeQueue(endpointId));
  }

  delete(id: string, cond?: DeleteCondition): Promise<boolean> {
    return this.write((c) => c.delete(id, cond));
  }

  due(now: number, limit: number): Promise<DueJobs> {
    return this.read((c) => c.due(now, limit));
  }

  counts(endpointId: string): Promise<EndpointCounts> {
    return this.read((c) => c.counts(endpointId));
  }

  batchBacklog(endpointId: string): Promise<number> {
    return this.read((c) => c.batchBacklog(endpointId));
  }

  queueDepth(endpointId: string): Promise<number> {
    return Promise.resolve(this.core.live.queued(endpointId));
  }

  queuePosition(id: string, cap: number): Promise<number | undefined> {
    return this.read(() => (this.positions ??= new SqliteQueuePositions(this.db)).of(id, cap));
  }

  recover(leaseUntil: number): Promise<RecoveryReport> {
    return this.write((c) => c.recover(leaseUntil));
  }

  enqueueWebhook(d: WebhookDelivery): Promise<void> {
    return this.write((c) => c.enqueueWebhook(d));
  }

  claimWebhooks(now: number, limit: number, leaseUntil: number): Promise<WebhookDelivery[]> {
    return this.write((c) => c.claimWebhooks(now, limit, leaseUntil));
  }

  recordWebhookAttempt(deliveryId: string, attempt: WebhookAttempt, nextAttemptAt: number | null): Promise<boolean> {
    return this.write((c) => c.recordWebhookAttempt(deliveryId, attempt, nextAttemptAt));
  }

  webhookDeliveries(jobId: string): Promise<WebhookDelivery[]> {
    return this.read((c) => c.webhookDeliveries(jobId));
  }

  appendLogs(id: string, lines: JobLogLine[]): Promise<number> {
    return lines.length === 0 ? this.read((c) => c.appendLogs(id, lines)) : this.write((c) => c.appendLogs(id, lines));
  }

  logs(id: string): Promise<JobLog | undefined> {
    return this.read((c) => c.logs(id));
  }

  listJobs(endpointId: string, q: JobListQuery): Promise<JobRecord[]> {
    return this.read((c) => c.listJobs(endpointId, q));
  }

  recent(endpointId: string, limit: number): Promise<JobRecord[]> {
    return this.read((c) => c.recent(endpointId, limit));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tx.settle();
    this.walSync?.close();
    await this.checkpointer?.close();
    this.db.close();
    this.lock?.release();
  }
}
