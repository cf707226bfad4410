import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { isTerminal, type JobStatus } from '@berth/protocol';
import type { Logger } from '@berth/protocol/log';
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
  Store,
  StreamSlice,
  WebhookAttempt,
  WebhookDelivery,
} from '../types.js';
import { toUnavailable, type PgConnectionOptions } from './connect.js';
import { DEFAULT_REPLICA_TIMES, ReplicaWatch, type ReplicaTimes } from './replica-watch.js';
import { insertValues, json, toRecord } from './rows.js';
import { named, SQL } from './statements.js';
import { PgJobPath } from './job-path.js';
import { PgPools } from './pg-pools.js';
import { pgTransitions } from './transitions.js';
import { DuplicateJobError } from '../../errors.js';
import { pgMaintenance } from './maintenance.js';
import { pgQueuePosition } from './queue-position.js';
import { LiveCounts } from './live-counts.js';
import { pgJobLogs } from './job-logs.js';
import { pgOutbox } from './webhook-outbox.js';
import { PgStreams } from './pg-streams.js';
import { PgFileStore } from './pg-file-store.js';
import { PgClusterBus } from '../../cluster/pg-cluster-bus.js';
import type { ClusterBus } from '../../cluster/types.js';
import { PgScalingLease } from './pg-scaling-lease.js';
import type { OutputFileStore } from '../output-files.js';
import type { Clock } from '../../clock.js';
import type { BatchStore } from '../batch-types.js';
import { pgBatchStore } from './batches.js';

/** Options of `PgStore`. */
export interface PgStoreOptions extends PgConnectionOptions {
  /** This control plane's id among the replicas sharing the database. Default: a random UUID. */
  replicaId?: string;
  /** Replica heartbeat and death detection (see `ReplicaWatch`). Default 2 s / 10 s. */
  replicaTimes?: ReplicaTimes;
  /** Where connection errors of idle pooled connections are reported. Default: ignored (the pool reconnects). */
  onError?: (err: unknown) => void;
}

/**
 * The PostgreSQL store: several `berth serve` replicas share one database. Every state change is one conditional
 * UPDATE (status and attempt in its WHERE), claims take the oldest queued job with `FOR UPDATE SKIP LOCKED`, and
 * terminal transitions write their webhook delivery in the same transaction. Queued jobs live only in the
 * database. Connection errors become 503 `unavailable`; the pool reconnects by itself once the database is back.
 * Create with `await PgStore.open(...)` (applies migrations).
 */
export class PgStore implements Store {
  /** The main pool (synchronous commits): the API key store and the scaling lease use it too. */
  readonly pool: Pool;
  readonly replicaId: string;
  readonly schema: string;
  /** Called after commit when jobs were queued on an endpoint (insert, retry, requeue): the cluster channel. */
  onQueued: ((endpointId: string) => void) | undefined;
  /** Both pools, and the statement and transaction helpers on them. */
  private readonly db: PgPools;
  private readonly watch: ReplicaWatch;
  private readonly liveCounts: LiveCounts;
  /** Batched inserts, claims and finishes, and the cluster messages riding in them. */
  readonly jobs: PgJobPath;
  /** Stream chunks (on the asynchronously committing pool). */
  readonly streams: PgStreams;
  readonly batches: BatchStore;

  private constructor(
    db: PgPools,
    readonly options: PgStoreOptions,
  ) {
    this.db = db;
    this.pool = db.pool;
    this.liveCounts = new LiveCounts(db.run);
    this.replicaId = options.replicaId ?? randomUUID();
    this.schema = options.schema ?? 'berth';
    const onError = options.onError ?? (() => {});
    this.watch = new ReplicaWatch(db.pool, this.replicaId, options.replicaTimes ?? DEFAULT_REPLICA_TIMES, onError);
    this.jobs = new PgJobPath(db.run, db.asyncRun, db.pool, db.asyncPool, this.replicaId);
    this.streams = new PgStreams(db.asyncRun, this.jobs.noticed);
    this.batches = pgBatchStore(db, (endpointId) => this.queued(endpointId));
  }

  /** Other replicas alive at the last heartbeat (0 before `recover`): a lone replica sends no notifications. */
  get otherReplicas(): number {
    return this.watch.liveOthers;
  }

  /** Replicas sharing this database talk over LISTEN/NOTIFY (`Store.clusterBus`). */
  clusterBus(): ClusterBus {
    return new PgClusterBus(this);
  }

  /** The scaling lease (`Store.scalingLease`): an advisory lock on a connection of its own, per schema and name. */
  scalingLease(name: string): PgScalingLease {
    return new PgScalingLease(() => this.pool.connect(), `berth-scale:${this.schema}:${name}`);
  }

  /** Connects, creates the schema if needed and applies pending migrations (under an advisory lock). */
  static async open(options: PgStoreOptions): Promise<PgStore> {
    return new PgStore(await PgPools.open(options), options);
  }

  private queued(endpointId: string, notified = false): void {
    this.jobs.queuedElsewhere(endpointId);
    if (!notified) this.onQueued?.(endpointId);
  }

  /** Jobs were queued on `endpointId` (here or by another replica): the next claim queries again. */
  queuedElsewhere(endpointId?: string): void {
    this.jobs.queuedElsewhere(endpointId);
  }

  async insert(job: JobRecord): Promise<void> {
    this.db.alive();
    if (job.status === 'IN_QUEUE') {
      // One statement, its own transaction, shared with the other requests' jobs (`InsertBatcher`). A /runsync
      // job commits asynchronously: its client is answered with its result (a synchronous commit, which
      // flushes the insert too) or, when the wait elapses first, after `flush()`.
      // A claim of the same turn may ride in the statement and take the job (`insert-claim.ts`): then it is
      // running, not queued, and nothing is announced.
      const r = await this.jobs.insertQueued(job);
      if (r !== 'claimed') this.queued(job.endpointId, r === 'notified');
    } else if (!isTerminal(job.status)) {
      // A running job (an import): one statement, nothing else to write with it.
      await (job.sync ? this.db.asyncPool : this.pool).query(named(SQL.insertOther, insertValues(job))).catch((err) => {
        if ((err as { code?: string }).code === '23505') throw new DuplicateJobError(job.id, { cause: err });
        return toUnavailable(err);
      });
    } else await this.db.tx((c) => pgTransitions.insertTerminal(c, job));
  }

  /** A synchronous commit of a one-row write: the WAL up to here, asynchronous commits included, is on disk. */
  async flush(): Promise<void> {
    await this.db.run(SQL.flush);
  }

  /** `input: false`: a big input stays in the table (the record holds an `UnreadJson`). */
  async get(id: string, options?: { input?: boolean }): Promise<JobRecord | undefined> {
    const [r] = await this.db.run(options?.input === false ? SQL.getLean : SQL.get, [id]);
    return r && toRecord(r);
  }

  appendLogs(id: string, lines: JobLogLine[]): Promise<number> {
    if (!lines.length) return this.get(id).then(() => 0);
    return this.db.tx((c) => pgJobLogs.append(c, id, lines));
  }

  logs(id: string): Promise<JobLog | undefined> {
    return this.db.use((p) => pgJobLogs.get(p, id));
  }

  listJobs(endpointId: string, q: JobListQuery): Promise<JobRecord[]> {
    return this.db.use((p) => pgJobLogs.page(p, endpointId, q));
  }

  recent(endpointId: string, limit: number): Promise<JobRecord[]> {
    return this.db.use((p) => pgJobLogs.recent(p, endpointId, limit));
  }

  claim(endpointId: string, workerId: string, now: number, lane?: ClaimLane): Promise<JobRecord | undefined> {
    this.db.alive();
    return this.jobs.claim(endpointId, workerId, now, lane);
  }

  batchBacklog(endpointId: string): Promise<number> {
    return pgMaintenance.batchBacklog(this.db.run, endpointId);
  }

  /**
   * The common case in one round trip: a job without a webhook ends in one statement shared with every other
   * result of the same event-loop turn (`FinishBatcher`). A job with a webhook is not matched by it and takes
   * the transaction with the outbox row.
   */
  async finish(
    id: string,
    attempt: number,
    patch: FinishPatch,
    now: number,
    retention: RetentionPolicy,
  ): Promise<JobRecord | undefined> {
    this.db.alive();
    const r = await this.jobs.finish(pgTransitions.finishParams(id, attempt, patch, now, retention));
    if (r) {
      // A big output is not read back (`FINISHED_COLS`): the record gets the value it was finished with.
      const rec = toRecord(r);
      if (r.output === null && patch.status === 'COMPLETED' && patch.output !== undefined) rec.output = patch.output;
      return rec;
    }
    const [webhook] = await this.db.run<{ n: number }>(SQL.hasWebhook, [id, attempt]);
    if (!webhook) return undefined;
    return this.db.tx((c) => pgTransitions.finish(c, id, attempt, patch, now, retention));
  }

  cancel(
    id: string,
    now: number,
    retention: RetentionPolicy,
  ): Promise<{ before: JobRecord; after: JobRecord } | undefined> {
    return this.db.tx((c) => pgTransitions.cancel(c, id, now, retention));
  }

  async retry(id: string, now: number): Promise<JobRecord | undefined> {
    const job = await this.db.tx((c) => pgTransitions.requeue(c, 'retry', [id, now]));
    if (job) this.queued(job.endpointId);
    return job;
  }

  async requeue(
    id: string,
    { attempt, now, maxAttempts, failError, retention }: RequeueOptions,
  ): Promise<JobRecord | undefined> {
    if (attempt >= maxAttempts) return this.finish(id, attempt, { status: 'FAILED', error: failError }, now, retention);
    const job = await this.db.tx((c) => pgTransitions.requeue(c, 'requeue', [id, attempt]));
    if (job) this.queued(job.endpointId);
    return job;
  }

  /**
   * Whether a notification already carried this event (answers true once): a chunk append's own (seq and count of
   * its chunks), or a batched claim's (the job's new status).
   */
  takeNoticed(id: string, attempt: number, what: { seq: number; count: number } | JobStatus): boolean {
    if (typeof what === 'string') return this.jobs.takeNoticed(id, attempt, what);
    return this.streams.takeNoticed(id, attempt, what.seq, what.count);
  }

  setProgress(id: string, attempt: number, progress: unknown): Promise<boolean> {
    return this.db.changed(SQL.setProgress, [id, attempt, json(progress)]);
  }

  appendStream(id: string, attempt: number, seq: number, chunks: unknown[]): Promise<number> {
    return this.streams.append(id, attempt, seq, chunks);
  }

  takeStream(id: string): Promise<unknown[]> {
    return this.streams.take(id);
  }

  readStream(id: string, from: number): Promise<StreamSlice | undefined> {
    return this.streams.read(id, from);
  }

  /**
   * Sends NOTIFY payloads on `channel` (the cluster bus). On the main pool: a transaction that only notifies writes
   * no WAL of its own, so its commit waits for no flush anyway, and the second pool's connections are left to the
   * claims, appends and /runsync inserts (measured: moving it there made cross-replica /runsync and /run slower).
   */
  async notify(channel: string, payloads: string[]): Promise<void> {
    if (payloads.length === 0) return;
    this.db.alive();
    await this.pool.query(
      payloads.length === 1 ? named(SQL.notify, [channel, payloads[0]]) : named(SQL.notifyMany, [channel, payloads]),
    );
  }

  /** Output files in the database: every replica serves every signed URL. */
  outputFiles(o: { ttlMs: number; clock: Clock; logger: Logger }): OutputFileStore {
    return new PgFileStore(this.pool, o);
  }

  enqueueWebhook(d: WebhookDelivery): Promise<void> {
    return this.db.use((p) => pgOutbox.enqueue(p, d));
  }

  claimWebhooks(now: number, limit: number, leaseUntil: number): Promise<WebhookDelivery[]> {
    return this.db.use((p) => pgOutbox.claim(p, now, limit, leaseUntil));
  }

  recordWebhookAttempt(deliveryId: string, attempt: WebhookAttempt, nextAttemptAt: number | null): Promise<boolean> {
    return this.db.tx((c) => pgOutbox.record(c, deliveryId, attempt, nextAttemptAt));
  }

  webhookDeliveries(jobId: string): Promise<WebhookDelivery[]> {
    return this.db.use((p) => pgOutbox.forJob(p, jobId));
  }

  claimStream(id: string, attempt: number, from: number, to: number): Promise<boolean> {
    return this.streams.claim(id, attempt, from, to);
  }

  setLease(id: string, attempt: number, until: number | null): Promise<boolean> {
    // Clearing the lease means the worker is connected here again: this replica owns the job now.
    return this.db.changed(SQL.setLease, [id, attempt, until, this.replicaId]);
  }

  runningOn(workerId: string): Promise<JobRecord[]> {
    return pgMaintenance.runningOn(this.db.run, workerId);
  }

  setExpiry(id: string, expiresAt: number): Promise<boolean> {
    return this.db.changed(SQL.setExpiry, [id, expiresAt]);
  }

  purgeQueue(endpointId: string): Promise<string[]> {
    return pgMaintenance.purgeQueue(this.db.tx, endpointId);
  }

  delete(id: string, cond?: DeleteCondition): Promise<boolean> {
    return pgMaintenance.delete(this.db.tx, id, cond);
  }

  deleteRetained(jobs: readonly { id: string; retainUntil: number }[]): Promise<string[]> {
    return pgMaintenance.deleteRetained(this.db.tx, jobs);
  }

  due(now: number, limit: number): Promise<DueJobs> {
    return pgMaintenance.due(this.db.run, now, limit);
  }

  counts(endpointId: string): Promise<EndpointCounts> {
    return this.liveCounts.counts(endpointId);
  }

  queueDepth(endpointId: string): Promise<number> {
    return pgMaintenance.queueDepth(this.db.run, endpointId);
  }

  queuePosition(id: string, cap: number): Promise<number | undefined> {
    return pgQueuePosition(this.db.run, id, cap);
  }

  /**
   * On start: registers this replica (heartbeat) and leases the running jobs no live replica owns, so their
   * workers can reconnect to any replica within the grace period. Jobs of live replicas are left alone.
   */
  async recover(leaseUntil: number): Promise<RecoveryReport> {
    const now = Date.now();
    await this.watch.start(leaseUntil - now).catch(toUnavailable);
    const deadAfterMs = (this.options.replicaTimes ?? DEFAULT_REPLICA_TIMES).deadAfterMs;
    return pgMaintenance.recover(this.db.run, leaseUntil, this.replicaId, now - deadAfterMs);
  }

  /** Stops the heartbeat (leaving the replica set, so others take over its running jobs at once) and closes the pool. */
  async close(): Promise<void> {
    if (this.db.closed) return;
    await this.watch.stop(this.watch.running);
    await this.db.close();
  }
}
