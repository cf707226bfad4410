import { join, resolve } from 'node:path';
import type { KeyStore, Store } from '@berth/server';
import type { FlagOptions } from './args.js';
import { EXIT, UsageError } from './internal/usage-error.js';

/** Where jobs live, as `berth dev` and `berth serve` take it from flags and environment. */
export interface StoreArgs {
  kind: 'sqlite' | 'memory' | 'postgres';
  /** Absolute data folder (SQLite file `berth.sqlite` inside). */
  dataDir: string;
  durability: 'normal' | 'full';
  /** PostgreSQL connection URL (`--store postgres`). */
  databaseUrl: string | undefined;
  /** PostgreSQL schema holding Berth's tables (`--store postgres`). */
  databaseSchema: string;
  /** Attempts before a job whose workers keep getting lost is FAILED. */
  maxAttempts: number | undefined;
  /** ms a disconnected worker (or every worker, after a restart) keeps its running jobs. */
  workerGraceMs: number | undefined;
}

/** The flags of `StoreArgs`, shared by `dev` and `serve`. */
export const STORE_FLAGS: FlagOptions = {
  store: { type: 'string' },
  'data-dir': { type: 'string' },
  durability: { type: 'string' },
  'database-url': { type: 'string' },
  'database-schema': { type: 'string' },
  'max-attempts': { type: 'string' },
  'worker-grace-ms': { type: 'string' },
};

export const STORE_HELP = `      --store <kind>      sqlite (default: durable, in --data-dir), postgres (durable, shared by several
                          replicas: docs/deployment.md) or memory (nothing survives a restart)
      --database-url <url>  PostgreSQL to use with --store postgres (postgres://user:pass@host:5432/db)
      --database-schema <name>  PostgreSQL schema for Berth's tables (default berth)
      --data-dir <dir>    where the SQLite database lives (default ./.berth, or BERTH_DATA_DIR)
      --durability <lvl>  normal (default: survives a crash of the process) or full (fsync every commit:
                          also survives power loss, slower)
      --max-attempts <n>  attempts before a job whose worker keeps getting lost is FAILED (default 3)
      --worker-grace-ms <ms>  how long a disconnected worker keeps its running jobs, and how long running
                          jobs wait for their workers after a restart (default 10000)
`;

export const STORE_ENV_HELP = `  BERTH_STORE, BERTH_DATA_DIR, BERTH_DURABILITY  defaults of --store, --data-dir, --durability
  BERTH_DATABASE_URL, BERTH_DATABASE_SCHEMA  defaults of --database-url, --database-schema
`;

function whole(command: string, flag: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min)
    throw new UsageError(`${flag} must be a whole number >= ${min} (got "${value}")`, command);
  return Number(value);
}

/** Reads the store flags (falling back to `BERTH_STORE`, `BERTH_DATA_DIR`, `BERTH_DURABILITY`, `BERTH_DATABASE_URL`, ...). */
export function parseStoreArgs(
  command: string,
  v: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  cwd: string,
): StoreArgs {
  const kind = (v['store'] as string | undefined) ?? env['BERTH_STORE'] ?? 'sqlite';
  if (kind !== 'sqlite' && kind !== 'memory' && kind !== 'postgres')
    throw new UsageError(`--store must be sqlite, postgres or memory (got "${kind}")`, command);
  const databaseUrl = (v['database-url'] as string | undefined) ?? env['BERTH_DATABASE_URL'];
  if (kind === 'postgres' && (databaseUrl === undefined || databaseUrl.trim() === '')) {
    throw new UsageError(
      '--store postgres needs --database-url (or BERTH_DATABASE_URL), e.g. postgres://berth@db.internal:5432/berth',
      command,
    );
  }
  if (databaseUrl !== undefined && kind === 'postgres' && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new UsageError(`--database-url must start with postgres:// (got "${redactUrl(databaseUrl)}")`, command);
  }
  const databaseSchema = (v['database-schema'] as string | undefined) ?? env['BERTH_DATABASE_SCHEMA'] ?? 'berth';
  if (!/^[a-z_][a-z0-9_]{0,40}$/.test(databaseSchema))
    throw new UsageError(
      `--database-schema must be lower-case letters, digits and _ (got "${databaseSchema}")`,
      command,
    );
  const durability = (v['durability'] as string | undefined) ?? env['BERTH_DURABILITY'] ?? 'normal';
  if (durability !== 'normal' && durability !== 'full')
    throw new UsageError(`--durability must be normal or full (got "${durability}")`, command);
  const dir = (v['data-dir'] as string | undefined) ?? env['BERTH_DATA_DIR'] ?? '.berth';
  if (dir.trim() === '') throw new UsageError('--data-dir must not be empty', command);
  return {
    kind,
    durability,
    databaseUrl: kind === 'postgres' ? databaseUrl : undefined,
    databaseSchema,
    dataDir: resolve(cwd, dir),
    maxAttempts: whole(command, '--max-attempts', v['max-attempts'] as string | undefined, 1),
    workerGraceMs: whole(command, '--worker-grace-ms', v['worker-grace-ms'] as string | undefined, 0),
  };
}

/** Opens the store the flags name, with a one-line description for the banner. */
export interface OpenedStore {
  store: Store;
  /** One line for the banner: where the data lives. */
  where: string;
  /** Stored API keys (SQLite and PostgreSQL). */
  keyStore?: KeyStore;
}

export async function openStore(args: StoreArgs): Promise<OpenedStore> {
  // Each store from its own subpath: only the chosen one's driver (an optional peer dependency) is loaded.
  if (args.kind === 'memory') {
    const { MemoryStore } = await import('@berth/server/memory');
    return { store: new MemoryStore(), where: 'in memory (nothing survives a restart)' };
  }
  if (args.kind === 'postgres') {
    const { PgStore, PgKeyStore } = await import('@berth/server/postgres');
    const url = args.databaseUrl ?? '';
    const store = await PgStore.open({ url, schema: args.databaseSchema });
    // API keys live in the same schema (table api_keys): every replica and `berth keys` share them.
    return {
      store,
      where: `${redactUrl(url)} (PostgreSQL, schema ${args.databaseSchema})`,
      keyStore: PgKeyStore.on(store.pool),
    };
  }
  const { SqliteStore, SqliteKeyStore } = await import('@berth/server/sqlite');
  const file = resolve(args.dataDir, 'berth.sqlite');
  const store = new SqliteStore({ file, durability: args.durability });
  // API keys from `berth keys create` live in the same file (table api_keys).
  return { store, where: `${file} (SQLite, durability ${args.durability})`, keyStore: new SqliteKeyStore(store.db) };
}

/** `openStore`, or, when the store cannot be opened, a message on stderr and exit code 1. */
export async function openStoreOrExit(args: StoreArgs, stderr: NodeJS.WritableStream): Promise<OpenedStore | number> {
  try {
    return await openStore(args);
  } catch (err) {
    const where = args.kind === 'postgres' ? redactUrl(args.databaseUrl ?? '') : args.dataDir;
    stderr.write(
      `berth: cannot open the data store in ${where}: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    return EXIT.failure;
  }
}

/** Server options that come from the store flags. */
export function storeServerOptions(args: StoreArgs): {
  maxAttempts?: number;
  workerGraceMs?: number;
  filesDir?: string;
} {
  return {
    // Output files workers upload without S3 live next to the database (memory store: a temp folder).
    // (PostgreSQL: each replica keeps its own folder; several replicas should have workers upload to S3.)
    ...(args.kind !== 'memory' ? { filesDir: join(args.dataDir, 'files') } : {}),
    ...(args.maxAttempts !== undefined ? { maxAttempts: args.maxAttempts } : {}),
    ...(args.workerGraceMs !== undefined ? { workerGraceMs: args.workerGraceMs } : {}),
  };
}

/** The banner line about the data and what was recovered. */
export function dataLine(where: string, recovered: { queued: number; running: number }): string {
  const found = recovered.queued + recovered.running;
  return `Data: ${where}${found > 0 ? `; recovered ${recovered.queued} queued and ${recovered.running} running jobs` : ''}`;
}

/** A connection URL without its password, for banners and messages. */
export function redactUrl(url: string): string {
  return url.replace(/^(\w+:\/\/[^:@/]*):[^@/]*@/, '$1:***@');
}
