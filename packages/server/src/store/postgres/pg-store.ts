import { createHash, randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { isTerminal } from '@berth/protocol';
import type { DeleteCondition, DueJobs, EndpointCounts, FinishPatch, JobLog, JobLogLine, JobRecord, RecoveryReport, RetentionPolicy, Store, WebhookAttempt, WebhookDelivery } from '../types.js';
import { createPool, isConnectionError, toUnavailable, type PgConnectionOptions } from './connect.js';
import { DEFAULT_REPLICA_TIMES, ReplicaWatch, type ReplicaTimes } from './replica-watch.js';
import { INSERT_COLUMNS, insertValues, json, toRecord, type JobRow } from './rows.js';
import { migrate } from './schema.js';
import { ClaimBatcher, CLAIM_MANY_SQL } from './claim-batch.js';
import { FinishBatcher, FINISH_MANY_SQL } from './finish-batch.js';
import { pgJobLogs } from './job-logs.js';
import { pgOutbox } from './webhook-outbox.js';
import { DuplicateJobError } from '../../errors.js';
import { ASYNC_COMMIT, pgStream } from './stream-sql.js';
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

type Q = Pick<PoolClient, 'query'>;
type Stat = 'completed' | 'failed' | 'retried';
const SHARDS = 16;
const EMPTY_HINT_MS = 1_000;
const insertSql = (seq: string) => `INSERT INTO jobs (${INSERT_COLUMNS}, queue_seq) VALUES (${Array.from({ length: 24 }, (_, i) => `$${i + 1}`).join(', ')}, ${seq})`;
const INSERT_QUEUED = insertSql("nextval('queue_seq')");
const INSERT_OTHER = insertSql('NULL');

const names = new Map<string, string>();
/**
 * A named (prepared) statement: PostgreSQL parses and plans it once per connection instead of on every call. Every
 * SQL text here is a fixed template, so the names (a hash of the text) are few.
 */
function named(text: string, values: unknown[]): { name: string; text: string; values: unknown[] } {
  let name = names.get(text);
  if (name === undefined) {
    name = `berth_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    names.set(text, name);
  }
  return { name, text, values };
}
const RETAIN = (now: string, sync: string, async: string) => `${now}::bigint + CASE WHEN sync THEN ${sync}::bigint ELSE ${async}::bigint END`;
const TERMINAL = `('COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT')`;

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
  private readonly finishes = new FinishBatcher((params) => this.q<JobRow & { idx: number }>(FINISH_MANY_SQL, params));
  private readonly claims = new ClaimBatcher(
    (params) => this.asyncRun<JobRow & { rn: number }>(CLAIM_MANY_SQL, params),
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
    const asyncPool = createPool({ ...options, poolSize: options.poolSize ?? 10 }, (err) => options.onError?.(err), ASYNC_COMMIT);
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

  private async tx<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    this.alive();
    let c: PoolClient;
    try {
      c = await this.pool.connect();
    } catch (err) {
      return toUnavailable(err);
    }
    let broken: Error | undefined;
    // A checked-out connection that dies between two statements emits 'error' on the client (no pool listener
    // then): keep it from crashing the process; the next statement fails and the connection is dropped.
    const onError = (err: Error) => (broken = err);
    c.on('error', onError);
    try {
      await c.query('BEGIN');
      const out = await fn(c);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      if (isConnectionError(err)) broken = err as Error;
      else await c.query('ROLLBACK').catch((e: Error) => (broken = e));
      return toUnavailable(err);
    } finally {
      c.off('error', onError);
      c.release(broken); // a broken connection is dropped, not returned to the pool
    }
  }

  private async one(c: Q, sql: string, params: unknown[]): Promise<JobRecord | undefined> {
    const r = await c.query<JobRow>(named(sql, params));
    return r.rows[0] ? toRecord(r.rows[0]) : undefined;
  }

  private async stat(c: Q, endpointId: string, column: Stat): Promise<void> {
    const shard = Math.floor(Math.random() * SHARDS);
    await c.query(`INSERT INTO endpoint_stats (endpoint_id, shard, ${column}) VALUES ($1, $2, 1)
      ON CONFLICT (endpoint_id, shard) DO UPDATE SET ${column} = endpoint_stats.${column} + 1`, [endpointId, shard]);
  }

  private queued(endpointId: string): void {
    this.queuedElsewhere(endpointId);
    this.onQueued?.(endpointId);
  }

  /** Jobs were queued on `endpointId` (here or by another replica): the next claim queries again. */
  queuedElsewhere(endpointId?: string): void {
    this.queueGen++;
    if (endpointId === undefined) this.emptyUntil.clear();
    else this.emptyUntil.delete(endpointId);
  }

  async insert(job: JobRecord): Promise<void> {
    const write = async (c: Q) => {
      try {
        await c.query(named(job.status === 'IN_QUEUE' ? INSERT_QUEUED : INSERT_OTHER, insertValues(job)));
      } catch (err) {
        if ((err as { code?: string }).code === '23505') throw new DuplicateJobError(job.id);
        throw err;
      }
    };
    if (!isTerminal(job.status)) {
      // One statement, its own transaction: nothing else to write with a queued (or running) job. A /runsync
      // job commits asynchronously: its client is answered with its result (a synchronous commit, which
      // flushes the insert too) or, when the wait elapses first, after `flush()`.
      this.alive();
      await write(job.sync ? this.asyncPool : this.pool).catch(toUnavailable);
      if (job.status === 'IN_QUEUE') this.queued(job.endpointId);
      return;
    }
    await this.tx(async (c) => {
      await write(c);
      if (job.status === 'COMPLETED') await this.stat(c, job.endpointId, 'completed');
      if (job.status === 'FAILED' || job.status === 'TIMED_OUT') await this.stat(c, job.endpointId, 'failed');
      await pgOutbox.added(c, job, job.finishedAt ?? job.createdAt); // stored already terminal
    });
  }

  /** A synchronous commit of a one-row write: the WAL up to here, asynchronous commits included, is on disk. */
  async flush(): Promise<void> {
    await this.q(`INSERT INTO settings (name, value) VALUES ('flush', '') ON CONFLICT (name) DO UPDATE SET value = ''`);
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const [r] = await this.q(`SELECT * FROM jobs WHERE id = $1`, [id]);
    return r && toRecord(r);
  }

  claim(endpointId: string, workerId: string, now: number): Promise<JobRecord | undefined> {
    this.alive();
    if ((this.emptyUntil.get(endpointId) ?? 0) > Date.now()) return Promise.resolve(undefined);
    return this.claims.claim(endpointId, workerId, now);
  }

  private finishSql(extraWhere: string): string {
    return `UPDATE jobs SET status = $3, error = $5, finished_at = $6::bigint, retain_until = ${RETAIN('$6', '$7', '$8')}, execution_deadline = NULL, lease_until = NULL,
         output = CASE WHEN cost IS NOT NULL AND $4::text IS NOT NULL AND jsonb_typeof($4::jsonb) = 'object'
           THEN ($4::jsonb || jsonb_build_object('cost', cost))::text ELSE $4::text END
       WHERE id = $1 AND status = 'IN_PROGRESS' AND attempt = $2${extraWhere} RETURNING *`;
  }

  private finishParams(id: string, attempt: number, patch: FinishPatch, now: number, retention: RetentionPolicy): unknown[] {
    const output = patch.status === 'COMPLETED' ? json(patch.output) : null;
    return [id, attempt, patch.status, output, patch.status === 'COMPLETED' ? null : patch.error, now, retention.sync, retention.async];
  }

  private async finishOn(c: Q, id: string, attempt: number, patch: FinishPatch, now: number, retention: RetentionPolicy): Promise<JobRecord | undefined> {
    const job = await this.one(c, this.finishSql(''), this.finishParams(id, attempt, patch, now, retention));
    if (!job) return undefined;
    await this.stat(c, job.endpointId, job.status === 'COMPLETED' ? 'completed' : 'failed');
    await pgOutbox.added(c, job, now);
    return job;
  }

  /**
   * The common case in one round trip: a job without a webhook ends in one statement shared with every other
   * result of the same event-loop turn (`FinishBatcher`). A job with a webhook is not matched and takes the
   * transaction with the outbox row.
   */
  private async finishFast(id: string, attempt: number, patch: FinishPatch, now: number, retention: RetentionPolicy): Promise<JobRecord | undefined | 'webhook'> {
    this.alive();
    const r = await this.finishes.add(this.finishParams(id, attempt, patch, now, retention));
    if (r) return toRecord(r);
    const [w] = await this.q<{ n: number }>(`SELECT 1 AS n FROM jobs WHERE id = $1 AND status = 'IN_PROGRESS' AND attempt = $2 AND webhook IS NOT NULL`, [id, attempt]);
    return w ? 'webhook' : undefined;
  }

  async finish(id: string, attempt: number, patch: FinishPatch, now: number, retention: RetentionPolicy): Promise<JobRecord | undefined> {
    const fast = await this.finishFast(id, attempt, patch, now, retention);
    if (fast !== 'webhook') return fast;
    return this.tx((c) => this.finishOn(c, id, attempt, patch, now, retention));
  }

  cancel(id: string, now: number, retention: RetentionPolicy): Promise<{ before: JobRecord; after: JobRecord } | undefined> {
    return this.tx(async (c) => {
      const before = await this.one(c, `SELECT * FROM jobs WHERE id = $1 AND status IN ('IN_QUEUE', 'IN_PROGRESS') FOR UPDATE`, [id]);
      if (!before) return undefined;
      const after = await this.one(c,
        `UPDATE jobs SET status = 'CANCELLED', finished_at = $2::bigint, retain_until = ${RETAIN('$2', '$3', '$4')}, execution_deadline = NULL,
           lease_until = NULL, queue_seq = NULL
         WHERE id = $1 AND status IN ('IN_QUEUE', 'IN_PROGRESS') RETURNING *`, [id, now, retention.sync, retention.async]);
      if (!after) return undefined;
      await pgOutbox.added(c, after, now);
      return { before, after };
    });
  }

  async retry(id: string, now: number): Promise<JobRecord | undefined> {
    const job = await this.tx(async (c) => {
      const job = await this.one(c,
        `UPDATE jobs SET status = 'IN_QUEUE', output = NULL, error = NULL, progress = NULL, worker_id = NULL, owner = NULL, started_at = NULL,
           finished_at = NULL, retain_until = NULL, retries = retries + 1, queued_at = $2, queue_seq = nextval('queue_seq'), stream_len = 0, stream_taken = 0
         WHERE id = $1 AND status IN ('FAILED', 'TIMED_OUT') RETURNING *`, [id, now]);
      if (!job) return undefined;
      await c.query(`DELETE FROM stream_chunks WHERE job_id = $1`, [id]);
      await this.stat(c, job.endpointId, 'retried');
      return job;
    });
    if (job) this.queued(job.endpointId);
    return job;
  }

  async requeue(id: string, attempt: number, now: number, maxAttempts: number, failError: string, retention: RetentionPolicy): Promise<JobRecord | undefined> {
    if (attempt >= maxAttempts) return this.finish(id, attempt, { status: 'FAILED', error: failError }, now, retention);
    const job = await this.tx(async (c) => {
      const job = await this.one(c,
        `UPDATE jobs SET status = 'IN_QUEUE', progress = NULL, worker_id = NULL, owner = NULL, started_at = NULL, execution_deadline = NULL,
           lease_until = NULL, retries = retries + 1, queue_seq = nextval('queue_seq'), stream_len = 0, stream_taken = 0
         WHERE id = $1 AND status = 'IN_PROGRESS' AND attempt = $2 RETURNING *`, [id, attempt]);
      if (!job) return undefined;
      await c.query(`DELETE FROM stream_chunks WHERE job_id = $1`, [id]);
      await this.stat(c, job.endpointId, 'retried');
      return job;
    });
    if (job) this.queued(job.endpointId);
    return job;
  }

  async setProgress(id: string, attempt: number, progress: unknown): Promise<boolean> {
    this.alive();
    const r = await this.pool.query(named(`UPDATE jobs SET progress = $3 WHERE id = $1 AND status = 'IN_PROGRESS' AND attempt = $2`, [id, attempt, json(progress)])).catch(toUnavailable);
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
    return pgStream.append(this.asyncRun, id, attempt, seq, chunks);
  }

  takeStream(id: string): Promise<unknown[]> {
    return pgStream.take(this.asyncRun, id);
  }

  /** Output files in the database: every replica serves every signed URL. */
  outputFiles(o: { ttlMs: number; clock: Clock; logger: Logger }): OutputFileStore {
    return new PgFileStore(this.pool, o);
  }

  claimStream(id: string, attempt: number, from: number, to: number): Promise<boolean> {
    return pgStream.claim(this.asyncRun, id, from, to, attempt);
  }

  async setLease(id: string, attempt: number, until: number | null): Promise<boolean> {
    this.alive();
    // Clearing the lease means the worker is connected here again: this replica owns the job now.
    const r = await this.pool.query(
      `UPDATE jobs SET lease_until = $3, owner = CASE WHEN $3::bigint IS NULL THEN $4 ELSE owner END WHERE id = $1 AND status = 'IN_PROGRESS' AND attempt = $2`,
      [id, attempt, until, this.replicaId]).catch(toUnavailable);
    return (r.rowCount ?? 0) > 0;
  }

  async runningOn(workerId: string): Promise<JobRecord[]> {
    return (await this.q(`SELECT * FROM jobs WHERE worker_id = $1 AND status = 'IN_PROGRESS'`, [workerId])).map(toRecord);
  }

  async setExpiry(id: string, expiresAt: number): Promise<boolean> {
    this.alive();
    const r = await this.pool.query(`UPDATE jobs SET expires_at = $2 WHERE id = $1`, [id, expiresAt]).catch(toUnavailable);
    return (r.rowCount ?? 0) > 0;
  }

  purgeQueue(endpointId: string): Promise<string[]> {
    return this.tx(async (c) => {
      const r = await c.query<{ id: string }>(`DELETE FROM jobs WHERE endpoint_id = $1 AND status = 'IN_QUEUE' RETURNING id`, [endpointId]);
      const ids = r.rows.map((x) => x.id);
      if (ids.length) await c.query(`DELETE FROM stream_chunks WHERE job_id = ANY($1)`, [ids]);
      await pgJobLogs.jobsDeleted(c, ids);
      await pgOutbox.jobDeleted(c, ids);
      return ids;
    });
  }

  delete(id: string, cond?: DeleteCondition): Promise<boolean> {
    return this.tx(async (c) => {
      const r = await c.query(`DELETE FROM jobs WHERE id = $1 AND ($2::bigint IS NULL OR expires_at = $2) AND ($3::bigint IS NULL OR retain_until = $3)`,
        [id, cond?.expiresAt ?? null, cond?.retainUntil ?? null]);
      if (!r.rowCount) return false;
      await c.query(`DELETE FROM stream_chunks WHERE job_id = $1`, [id]);
      await pgJobLogs.jobsDeleted(c, [id]);
      await pgOutbox.jobDeleted(c, [id]);
      return true;
    });
  }

  async due(now: number, limit: number): Promise<DueJobs> {
    const all = async (where: string, order: string) => (await this.q(`SELECT * FROM jobs WHERE ${where} ORDER BY ${order} LIMIT $2`, [now, limit])).map(toRecord);
    const [expired, timedOut, retained, leaseExpired] = await Promise.all([
      all(`expires_at <= $1`, 'expires_at'),
      all(`execution_deadline <= $1 AND status = 'IN_PROGRESS'`, 'execution_deadline'),
      all(`retain_until <= $1 AND status IN ${TERMINAL}`, 'retain_until'),
      all(`lease_until <= $1 AND status = 'IN_PROGRESS'`, 'lease_until'),
    ]);
    return { expired, timedOut, retained, leaseExpired };
  }

  async counts(endpointId: string): Promise<EndpointCounts> {
    const [s] = await this.q<{ completed: number | null; failed: number | null; retried: number | null; in_queue: number; in_progress: number }>(
      `SELECT (SELECT sum(completed) FROM endpoint_stats WHERE endpoint_id = $1)::bigint AS completed,
              (SELECT sum(failed) FROM endpoint_stats WHERE endpoint_id = $1)::bigint AS failed,
              (SELECT sum(retried) FROM endpoint_stats WHERE endpoint_id = $1)::bigint AS retried,
              (SELECT count(*) FROM jobs WHERE endpoint_id = $1 AND status = 'IN_QUEUE') AS in_queue,
              (SELECT count(*) FROM jobs WHERE endpoint_id = $1 AND status = 'IN_PROGRESS') AS in_progress`, [endpointId]);
    return { completed: s?.completed ?? 0, failed: s?.failed ?? 0, retried: s?.retried ?? 0, inProgress: s?.in_progress ?? 0, inQueue: s?.in_queue ?? 0 };
  }

  async queueDepth(endpointId: string): Promise<number> {
    const [r] = await this.q<{ n: number }>(`SELECT count(*) AS n FROM jobs WHERE endpoint_id = $1 AND status = 'IN_QUEUE'`, [endpointId]);
    return r?.n ?? 0;
  }

  /**
   * On start: registers this replica (heartbeat) and leases the running jobs no live replica owns, so their
   * workers can reconnect to any replica within the grace period. Jobs of live replicas are left alone.
   */
  async recover(leaseUntil: number): Promise<RecoveryReport> {
    const now = Date.now();
    await this.watch.start(leaseUntil - now).catch(toUnavailable);
    await this.q(`UPDATE jobs SET lease_until = $1 WHERE status = 'IN_PROGRESS' AND (lease_until IS NULL OR lease_until < $1)
      AND (owner IS NULL OR owner = $2 OR owner NOT IN (SELECT id FROM replicas WHERE seen_at >= $3 AND id <> $2))`,
      [leaseUntil, this.replicaId, now - (this.options.replicaTimes ?? DEFAULT_REPLICA_TIMES).deadAfterMs]);
    const [n] = await this.q<{ queued: number; running: number }>(`SELECT count(*) FILTER (WHERE status = 'IN_QUEUE') AS queued,
      count(*) FILTER (WHERE status = 'IN_PROGRESS') AS running FROM jobs`);
    const eps = await this.q<{ endpoint_id: string }>(`SELECT DISTINCT endpoint_id FROM jobs ORDER BY endpoint_id`);
    return { queued: n?.queued ?? 0, running: n?.running ?? 0, endpoints: eps.map((r) => r.endpoint_id) };
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
