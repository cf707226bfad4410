import type { Pool, PoolClient } from 'pg';
import { createPool, toUnavailable, type PgConnectionOptions } from './connect.js';
import type { JobRow } from './rows.js';
import { migrate } from './schema.js';
import { named } from './statements.js';
import { inTransaction } from './transaction.js';

/** What runs a statement: a pool, or a connection inside a transaction. */
export type Queryable = Pick<PoolClient, 'query'>;
/** One statement on one of the store's pools, answering its rows (connection errors become 503 `unavailable`). */
export type Run = <R extends object = JobRow>(sql: string, params?: unknown[]) => Promise<R[]>;
/** A transaction on the store's main pool. */
export type Tx = <T>(fn: (c: PoolClient) => Promise<T>) => Promise<T>;

/** The settings of the stream pool's connections. */
const ASYNC_COMMIT = '-c synchronous_commit=off';

/**
 * The PostgreSQL store's two pools and the helpers that run a statement or a transaction on them: connection errors
 * become 503 `unavailable`, and a closed store refuses.
 */
export class PgPools {
  #closed = false;

  private constructor(
    readonly pool: Pool,
    /**
     * Claims, stream chunks and /runsync inserts: a second pool (as large as the first) committing asynchronously
     * (see `stream-sql.ts`): what it writes is visible at once; only a crash of the PostgreSQL server can undo its
     * last fraction of a second.
     */
    readonly asyncPool: Pool,
  ) {}

  /** Connects, creates the schema if needed and applies pending migrations (under an advisory lock). */
  static async open(options: PgConnectionOptions & { onError?: (err: unknown) => void }): Promise<PgPools> {
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
    return new PgPools(pool, asyncPool);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Throws once the store is closed. */
  alive(): void {
    if (this.#closed) throw new Error('the store is closed');
  }

  /** One statement on the main pool. */
  readonly run: Run = async <R extends object = JobRow>(sql: string, params: unknown[] = []): Promise<R[]> => {
    this.alive();
    try {
      return (await this.pool.query<R>(named(sql, params))).rows;
    } catch (err) {
      return toUnavailable(err);
    }
  };

  /** One statement on the asynchronously committing pool. */
  readonly asyncRun: Run = async <R extends object = JobRow>(sql: string, params: unknown[] = []): Promise<R[]> => {
    this.alive();
    try {
      return (await this.asyncPool.query<R>(named(sql, params))).rows;
    } catch (err) {
      return toUnavailable(err);
    }
  };

  /** A transaction on the main pool (a closed store throws at once). */
  readonly tx: Tx = (fn) => {
    this.alive();
    return inTransaction(this.pool, fn);
  };

  /** One conditional write on the main pool: whether it changed a row. */
  async changed(sql: string, params: unknown[]): Promise<boolean> {
    this.alive();
    const r = await this.pool.query(named(sql, params)).catch(toUnavailable);
    return (r.rowCount ?? 0) > 0;
  }

  /** `fn` on the main pool (one statement: atomic by itself). */
  async use<T>(fn: (pool: Pool) => Promise<T>): Promise<T> {
    this.alive();
    return fn(this.pool).catch(toUnavailable);
  }

  /** Refuses from now on and closes both pools. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([this.pool.end(), this.asyncPool.end()]);
  }
}
