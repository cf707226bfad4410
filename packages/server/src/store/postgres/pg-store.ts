import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { isTerminal, type JobStatus } from '@berth/protocol';
import type {
  DeleteCondition,
  DueJobs,
  EndpointCounts,
  FinishPatch,
  JobLog,
  JobLogLine,
  JobRecord,
  RecoveryReport,
  RetentionPolicy,
  Store,
  WebhookAttempt,
  WebhookDelivery,
} from '../types.js';
import { createPool, toUnavailable, type PgConnectionOptions } from './connect.js';
import { DEFAULT_REPLICA_TIMES, ReplicaWatch, type ReplicaTimes } from './replica-watch.js';
import { insertValues, json, toRecord, type JobRow } from './rows.js';
import { migrate } from './schema.js';
import { ClaimBatcher } from './claim-batch.js';
import { FinishBatcher } from './finish-batch.js';
import { CLAIM_MANY_SQL, FINISH_MANY_SQL, named, SQL } from './statements.js';
import { CLAIM_MANY_NOTIFY_SQL, FINISH_MANY_NOTIFY_SQL } from './notify-sql.js';
import { NoticeLedger } from './notices.js';
import { inTransaction } from './transaction.js';
import { pgJobLogs } from './job-logs.js';
import { pgOutbox } from './webhook-outbox.js';
import { pgTransitions } from './transitions.js';
import { DuplicateJobError } from '../../errors.js';
import { ASYNC_COMMIT } from './stream-sql.js';
import { InsertBatcher } from './insert-batch.js';
import { pgMaintenance } from './maintenance.js';
import { PgStreams } from './pg-streams.js';
import { PgFileStore } from './pg-file-store.js';
import { PgClusterBus } from '../../cluster/pg-cluster-bus.js';
import type { ClusterBus } from '../../cluster/types.js';
import type { OutputFileStore } from '../../files/types.js';
import type { Clock } from '../../clock.js';
import type { Logger } from '../../logger.js';

/** Options of `PgStore`. */
export interface PgStoreOptions extends PgConnectionOptions {
  /** This control plane's id among the replicas sharing the database. Default: a random UUID. */
  replicaId?: string;
  /** Replica heartbeat and death detection (see `ReplicaWatch`). Default 2 s / 10 s. */
  replicaTimes?: ReplicaTimes;
  /** Where connection errors of idle pooled connections are reported. Default: ignored (the pool reconnects). */
  onError?: (err: unknown) => void;
}

const EMPTY_HINT_MS = 1_000;
/**
 * The PostgreSQL store: several `berth serve` replicas share one database. Every state change is one conditional
 * UPDATE (status and attempt in its WHERE), claims take the oldest queued job with `FOR UPDATE SKIP LOCKED`, and
 * terminal transitions write their webhook delivery in the same transaction. Queued jobs live only in the
 * database. Connection errors become 503 `unavailable`; the pool reconnects by itself once the database is back.
 * Create with `await PgStore.open(...)` (applies migrations).
 */
export class PgStore implements Store {
  readonly replicaId: string;
  readonly schema: string;
  /** Called after commit when jobs were queued on an endpoint (insert, retry, requeue): the cluster channel. */
  onQueued: ((endpointId: string) => void) | undefined;
  private readonly watch: ReplicaWatch;
  private closed = false;
  /**
   * Endpoints whose queue a claim just found empty, until when (epoch ms): a worker with free credits asks for
   * work after every result, and an empty queue should not cost a query each time. Cleared by anything that
   * queues a job here or on another replica (`queuedElsewhere`); it expires after `EMPTY_HINT_MS` anyway, so a
   * lost notification delays a job by at most that.
   */
  private readonly emptyUntil = new Map<string, number>();
  private queueGen = 0;
  /** Queued inserts of `/run` (synchronous commit) and of `/runsync` (asynchronous: see `insert`), batched. */
  private readonly inserts: InsertBatcher;
  private readonly syncInserts: InsertBatcher;
  /** Stream chunks (on the asynchronously committing pool). */
  readonly streams: PgStreams;
  /** Changes whose cluster notification rode in their own statement (`takeNoticed`). */
  private readonly noticed = new NoticeLedger();
  /**
   * Set by the cluster bus: where a batched finish sends the finished jobs' change events itself (channel and
   * payload header), or `undefined` while no other replica listens.
   */
  eventNotice: (() => { channel: string; header: string } | undefined) | undefined;
  private readonly finishes = new FinishBatcher((params) =>
    this.withEvents(this.run, FINISH_MANY_SQL, FINISH_MANY_NOTIFY_SQL, params),
  );
  private readonly claims = new ClaimBatcher(
    (params) => this.withEvents(this.asyncRun, CLAIM_MANY_SQL, CLAIM_MANY_NOTIFY_SQL, params),
    () => this.replicaId,
    (endpointId, gen) => {
      if (gen === this.queueGen) this.emptyUntil.set(endpointId, Date.now() + EMPTY_HINT_MS);
    },
    () => this.queueGen,
  );

  private constructor(
    readonly pool: Pool,
    /**
     * Claims, stream chunks and /runsync inserts: a second pool (as large as the first) committing asynchronously (see `stream-sql.ts`): what it writes is
     * visible at once; only a crash of the PostgreSQL server can undo its last fraction of a second.
     */
    private readonly asyncPool: Pool,
    readonly options: PgStoreOptions,
  ) {
    this.replicaId = options.replicaId ?? randomUUID();
    this.schema = options.schema ?? 'berth';
    const onError = options.onError ?? (() => {});
    this.watch = new ReplicaWatch(pool, this.replicaId, options.replicaTimes ?? DEFAULT_REPLICA_TIMES, onError);
    const notice = () => this.eventNotice?.();
    this.inserts = new InsertBatcher(pool, notice);
    this.syncInserts = new InsertBatcher(asyncPool, notice);
    this.streams = new PgStreams(this.asyncRun, this.noticed);
  }

  /** Other replicas alive at the last heartbeat (0 before `recover`): a lone replica sends no notifications. */
  get otherReplicas(): number {
    return this.watch.liveOthers;
  }

  /** Replicas sharing this database talk over LISTEN/NOTIFY (`Store.clusterBus`). */
  clusterBus(): ClusterBus {
    return new PgClusterBus(this);
  }

  /** Connects, creates the schema if needed and applies pending migrations (under an advisory lock). */
  static async open(options: PgStoreOptions): Promise<PgStore> {
    const pool = createPool(options, (err) => options.onError?.(err));
    try {
      await migrate(pool, options.schema ?? 'berth');
    } catch (err) {
      await pool.end().catch(() => {});
      throw err;
    }
    const asyncPool = createPool(
      { ...options, poolSize: options.poolSize ?? 10 },
      (err) => options.onError?.(err),
      ASYNC_COMMIT,
    );
    return new PgStore(pool, asyncPool, options);
  }

  private alive(): void {
    if (this.closed) throw new Error('the store is closed');
  }

  private async q<R extends object = JobRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    this.alive();
    try {
      return (await this.pool.query<R>(named(sql, params))).rows;
    } catch (err) {
      return toUnavailable(err);
    }
  }

  private tx<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    this.alive();
    return inTransaction(this.pool, fn);
  }

  private readonly run = <R extends object = JobRow>(sql: string, params: unknown[] = []) => this.q<R>(sql, params);
  private readonly runTx = <T>(fn: (c: PoolClient) => Promise<T>) => this.tx(fn);

  private queued(endpointId: string, notified = false): void {
    this.queuedElsewhere(endpointId);
    if (!notified) this.onQueued?.(endpointId);
  }

  /** Jobs were queued on `endpointId` (here or by another replica): the next claim queries again. */
  queuedElsewhere(endpointId?: string): void {
    this.queueGen++;
    if (endpointId === undefined) this.emptyUntil.clear();
    else this.emptyUntil.delete(endpointId);
  }

  async insert(job: JobRecord): Promise<void> {
    this.alive();
    if (job.status === 'IN_QUEUE') {
      // One statement, its own transaction, shared with the other requests' jobs (`InsertBatcher`). A /runsync
      // job commits asynchronously: its client is answered with its result (a synchronous commit, which
      // flushes the insert too) or, when the wait elapses first, after `flush()`.
      const notified = await (job.sync ? this.syncInserts : this.inserts).insert(job);
      this.queued(job.endpointId, notified);
    } else if (!isTerminal(job.status)) {
      // A running job (an import): one statement, nothing else to write with it.
      await (job.sync ? this.asyncPool : this.pool).query(named(SQL.insertOther, insertValues(job))).catch((err) => {
        if ((err as { code?: string }).code === '23505') throw new DuplicateJobError(job.id);
        return toUnavailable(err);
      });
    } else await this.tx((c) => pgTransitions.insertTerminal(c, job));
  }

  /** A synchronous commit of a one-row write: the WAL up to here, asynchronous commits included, is on disk. */
  async flush(): Promise<void> {
    await this.q(SQL.flush);
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const [r] = await this.q(SQL.get, [id]);
    return r && toRecord(r);
  }

  claim(endpointId: string, workerId: string, now: number): Promise<JobRecord | undefined> {
    this.alive();
    if ((this.emptyUntil.get(endpointId) ?? 0) > Date.now()) return Promise.resolve(undefined);
    return this.claims.claim(endpointId, workerId, now);
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
    this.alive();
    const r = await this.finishes.add(pgTransitions.finishParams(id, attempt, patch, now, retention));
    if (r) return toRecord(r);
    const [webhook] = await this.q<{ n: number }>(SQL.hasWebhook, [id, attempt]);
    if (!webhook) return undefined;
    return this.tx((c) => pgTransitions.finish(c, id, attempt, patch, now, retention));
  }

  cancel(
    id: string,
    now: number,
    retention: RetentionPolicy,
  ): Promise<{ before: JobRecord; after: JobRecord } | undefined> {
    return this.tx((c) => pgTransitions.cancel(c, id, now, retention));
  }

  async retry(id: string, now: number): Promise<JobRecord | undefined> {
    const job = await this.tx((c) => pgTransitions.requeue(c, 'retry', [id, now]));
    if (job) this.queued(job.endpointId);
    return job;
  }

  async requeue(
    id: string,
    attempt: number,
    now: number,
    maxAttempts: number,
    failError: string,
    retention: RetentionPolicy,
  ): Promise<JobRecord | undefined> {
    if (attempt >= maxAttempts) return this.finish(id, attempt, { status: 'FAILED', error: failError }, now, retention);
    const job = await this.tx((c) => pgTransitions.requeue(c, 'requeue', [id, attempt]));
    if (job) this.queued(job.endpointId);
    return job;
  }

  /**
   * Whether a notification already carried this event (answers true once): a chunk append's own (`kind` chunk:
   * seq and count) or a batched finish's (`kind` change of a terminal record).
   */
  takeNoticed(id: string, attempt: number, what: { seq: number; count: number } | JobStatus): boolean {
    if (typeof what === 'string') return this.noticed.take(`${id}\t${attempt}\t${what}`);
    return this.streams.takeNoticed(id, attempt, what.seq, what.count);
  }

  /**
   * Runs a batched claim or finish; while other replicas listen, the variant that sends the changed jobs' change
   * events itself (`notify-sql.ts`), noting them so the bus does not send them again.
   */
  private async withEvents<R extends JobRow>(
    run: <T extends object>(sql: string, params: unknown[]) => Promise<T[]>,
    plain: string,
    notifying: string,
    params: unknown[],
  ): Promise<R[]> {
    const n = this.eventNotice?.();
    if (!n) return run<R>(plain, params);
    const rows = await run<R & { notified?: boolean }>(notifying, [...params, n.channel, n.header]);
    for (const r of rows) if (r.notified) this.noticed.add(`${r.id}\t${r.attempt}\t${r.status}`);
    return rows;
  }

  async setProgress(id: string, attempt: number, progress: unknown): Promise<boolean> {
    this.alive();
    const r = await this.pool.query(named(SQL.setProgress, [id, attempt, json(progress)])).catch(toUnavailable);
    return (r.rowCount ?? 0) > 0;
  }

  private readonly asyncRun = async <R extends object>(sql: string, params: unknown[]): Promise<R[]> => {
    this.alive();
    try {
      return (await this.asyncPool.query<R>(named(sql, params))).rows;
    } catch (err) {
      return toUnavailable(err);
    }
  };

  appendStream(id: string, attempt: number, seq: number, chunks: unknown[]): Promise<number> {
    return this.streams.append(id, attempt, seq, chunks);
  }

  takeStream(id: string): Promise<unknown[]> {
    return this.streams.take(id);
  }

  /**
   * Sends NOTIFY payloads on `channel` (the cluster bus). On the main pool: a transaction that only notifies writes
   * no WAL of its own, so its commit waits for no flush anyway, and the second pool's connections are left to the
   * claims, appends and /runsync inserts (measured: moving it there made cross-replica /runsync and /run slower).
   */
  async notify(channel: string, payloads: string[]): Promise<void> {
    if (payloads.length === 0) return;
    this.alive();
    await this.pool.query(
      payloads.length === 1 ? named(SQL.notify, [channel, payloads[0]]) : named(SQL.notifyMany, [channel, payloads]),
    );
  }

  /** Output files in the database: every replica serves every signed URL. */
  outputFiles(o: { ttlMs: number; clock: Clock; logger: Logger }): OutputFileStore {
    return new PgFileStore(this.pool, o);
  }

  claimStream(id: string, attempt: number, from: number, to: number): Promise<boolean> {
    return this.streams.claim(id, attempt, from, to);
  }

  async setLease(id: string, attempt: number, until: number | null): Promise<boolean> {
    this.alive();
    // Clearing the lease means the worker is connected here again: this replica owns the job now.
    const r = await this.pool.query(named(SQL.setLease, [id, attempt, until, this.replicaId])).catch(toUnavailable);
    return (r.rowCount ?? 0) > 0;
  }

  runningOn(workerId: string): Promise<JobRecord[]> {
    return pgMaintenance.runningOn(this.run, workerId);
  }

  async setExpiry(id: string, expiresAt: number): Promise<boolean> {
    this.alive();
    const r = await this.pool.query(named(SQL.setExpiry, [id, expiresAt])).catch(toUnavailable);
    return (r.rowCount ?? 0) > 0;
  }

  purgeQueue(endpointId: string): Promise<string[]> {
    return pgMaintenance.purgeQueue(this.runTx, endpointId);
  }

  delete(id: string, cond?: DeleteCondition): Promise<boolean> {
    return pgMaintenance.delete(this.runTx, id, cond);
  }

  due(now: number, limit: number): Promise<DueJobs> {
    return pgMaintenance.due(this.run, now, limit);
  }

  counts(endpointId: string): Promise<EndpointCounts> {
    return pgMaintenance.counts(this.run, endpointId);
  }

  queueDepth(endpointId: string): Promise<number> {
    return pgMaintenance.queueDepth(this.run, endpointId);
  }

  /**
   * On start: registers this replica (heartbeat) and leases the running jobs no live replica owns, so their
   * workers can reconnect to any replica within the grace period. Jobs of live replicas are left alone.
   */
  async recover(leaseUntil: number): Promise<RecoveryReport> {
    const now = Date.now();
    await this.watch.start(leaseUntil - now).catch(toUnavailable);
    const deadAfterMs = (this.options.replicaTimes ?? DEFAULT_REPLICA_TIMES).deadAfterMs;
    return pgMaintenance.recover(this.run, leaseUntil, this.replicaId, now - deadAfterMs);
  }

  appendLogs(id: string, lines: JobLogLine[]): Promise<number> {
    if (!lines.length) return this.get(id).then(() => 0);
    return this.tx((c) => pgJobLogs.append(c, id, lines));
  }

  async logs(id: string): Promise<JobLog | undefined> {
    this.alive();
    return pgJobLogs.get(this.pool, id).catch(toUnavailable);
  }

  async recent(endpointId: string, limit: number): Promise<JobRecord[]> {
    this.alive();
    return pgJobLogs.recent(this.pool, endpointId, limit).catch(toUnavailable);
  }

  async claimWebhooks(now: number, limit: number, leaseUntil: number): Promise<WebhookDelivery[]> {
    this.alive();
    return pgOutbox.claim(this.pool, now, limit, leaseUntil).catch(toUnavailable); // one statement: atomic by itself
  }

  recordWebhookAttempt(deliveryId: string, attempt: WebhookAttempt, nextAttemptAt: number | null): Promise<boolean> {
    return this.tx((c) => pgOutbox.record(c, deliveryId, attempt, nextAttemptAt));
  }

  async webhookDeliveries(jobId: string): Promise<WebhookDelivery[]> {
    this.alive();
    return pgOutbox.forJob(this.pool, jobId).catch(toUnavailable);
  }

  /** Stops the heartbeat (leaving the replica set, so others take over its running jobs at once) and closes the pool. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.watch.stop(this.watch.running);
    this.closed = true;
    await Promise.all([this.pool.end(), this.asyncPool.end()]);
  }
}
