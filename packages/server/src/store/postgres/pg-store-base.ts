import type { Pool, PoolClient } from 'pg';
import type { JobLog, JobLogLine, JobRecord, WebhookAttempt, WebhookDelivery } from '../types.js';
import { toUnavailable } from './connect.js';
import { toRecord, type JobRow } from './rows.js';
import { named, SQL } from './statements.js';
import { inTransaction } from './transaction.js';
import { pgJobLogs } from './job-logs.js';
import { pgOutbox } from './webhook-outbox.js';

/**
 * What `PgStore` builds on: its two pools and the helpers that run a statement or a transaction on them
 * (connection errors become 503 `unavailable`; a closed store refuses), with the reads and the job logs and
 * webhook outbox that are one statement or one transaction each (`job-logs.ts`, `webhook-outbox.ts`).
 */
export abstract class PgStoreBase {
  protected closed = false;

  constructor(
    readonly pool: Pool,
    /**
     * Claims, stream chunks and /runsync inserts: a second pool (as large as the first) committing asynchronously
     * (see `stream-sql.ts`): what it writes is visible at once; only a crash of the PostgreSQL server can undo its
     * last fraction of a second.
     */
    protected readonly asyncPool: Pool,
  ) {}

  protected alive(): void {
    if (this.closed) throw new Error('the store is closed');
  }

  protected async q<R extends object = JobRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    this.alive();
    try {
      return (await this.pool.query<R>(named(sql, params))).rows;
    } catch (err) {
      return toUnavailable(err);
    }
  }

  protected tx<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    this.alive();
    return inTransaction(this.pool, fn);
  }

  protected readonly run = <R extends object = JobRow>(sql: string, params: unknown[] = []) => this.q<R>(sql, params);
  protected readonly runTx = <T>(fn: (c: PoolClient) => Promise<T>) => this.tx(fn);

  protected readonly asyncRun = async <R extends object>(sql: string, params: unknown[]): Promise<R[]> => {
    this.alive();
    try {
      return (await this.asyncPool.query<R>(named(sql, params))).rows;
    } catch (err) {
      return toUnavailable(err);
    }
  };

  /** One conditional write on the main pool: whether it changed a row. */
  protected async changed(sql: string, params: unknown[]): Promise<boolean> {
    this.alive();
    const r = await this.pool.query(named(sql, params)).catch(toUnavailable);
    return (r.rowCount ?? 0) > 0;
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const [r] = await this.q(SQL.get, [id]);
    return r && toRecord(r);
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

  async enqueueWebhook(d: WebhookDelivery): Promise<void> {
    this.alive();
    await pgOutbox.enqueue(this.pool, d).catch(toUnavailable); // one statement: atomic by itself
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
}
