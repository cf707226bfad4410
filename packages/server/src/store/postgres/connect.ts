import { createRequire } from 'node:module';
import type { Pool, PoolConfig } from 'pg';
import { MissingDependencyError, StoreUnavailableError } from '../../errors.js';

type PgModule = typeof import('pg');
let pg: PgModule | undefined;

/**
 * Loads `pg` on first use, like better-sqlite3 (`sqlite/open-database.ts`): users of SQLite or the memory store
 * never load it, and a missing module gets a message that says what to do.
 */
export function loadPg(): PgModule {
  if (!pg) {
    try {
      pg = createRequire(import.meta.url)('pg') as PgModule;
    } catch (err) {
      throw new MissingDependencyError(
        'pg',
        `the PostgreSQL store needs the pg package, which is not installed (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); run \`npm install pg\`, or use another store (--store sqlite)`,
        { cause: err },
      );
    }
  }
  return pg;
}

/** A schema name Berth accepts (it is also part of the NOTIFY channel name). */
export const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,40}$/;

/** Options shared by the job store, the key store and the cluster channel. */
export interface PgConnectionOptions {
  /** `postgres://user@host:port/db` (CLI: `--database-url`, env `BERTH_DATABASE_URL`). */
  url: string;
  /** Schema holding Berth's tables (created if missing). Default `berth`. */
  schema?: string;
  /** Connections in the pool. Default 10. */
  poolSize?: number;
}

/** Converts BIGINT (int8) to a JS number: every epoch-ms and counter Berth stores fits in 2^53. */
function int8(v: string): number {
  return Number(v);
}

/**
 * A pool whose connections use `schema` and read int8 as numbers; idle-connection errors are logged, not thrown.
 * `settings`: more `-c name=value` run-time settings of its connections.
 */
export function createPool(o: PgConnectionOptions, onError: (err: Error) => void, settings = ''): Pool {
  const schema = o.schema ?? 'berth';
  if (!SCHEMA_RE.test(schema))
    throw new Error(`invalid PostgreSQL schema name "${schema}": use lower-case letters, digits and _`);
  const { Pool: PoolCtor, types } = loadPg();
  const config: PoolConfig = {
    connectionString: o.url,
    max: o.poolSize ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // A path that silently drops packets (no reset) must not hang requests: give up on a statement after 20 s
    // (the connection is then dropped) and probe idle connections with TCP keepalive.
    query_timeout: 20_000,
    keepAlive: true,
    options: `-c search_path=${schema}${settings ? ` ${settings}` : ''}`,
    // Named, so an operator (or a test) can tell Berth's connections apart in pg_stat_activity.
    application_name: `berth:${schema}`,
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === 20 ? int8 : types.getTypeParser(oid, format as 'text')) as never,
    },
  };
  const pool = new PoolCtor(config);
  pool.on('error', onError); // an idle connection died (database restart, pg_terminate_backend): the pool replaces it
  return pool;
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

/** True for errors that mean "the database cannot be reached now" rather than "this statement is wrong". */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: string }).code;
  if (code !== undefined && (CONNECTION_CODES.has(code) || code.startsWith('08'))) return true;
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable|Connection refused|Query read timeout/i.test(
    err.message,
  );
}

/** A connection error becomes 503 `unavailable` (clients retry); anything else is rethrown unchanged. */
export function toUnavailable(err: unknown): never {
  if (isConnectionError(err))
    throw new StoreUnavailableError(`the database is unreachable (${(err as Error).message}); retry shortly`, {
      cause: err,
    });
  throw err;
}

/** Quotes an identifier that matched `SCHEMA_RE` or a similar plain name. */
export const ident = (name: string): string => `"${name}"`;
