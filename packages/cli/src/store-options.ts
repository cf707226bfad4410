import { join, resolve } from 'node:path';
import type { KeyStore, Store } from '@berth/server';
import type { FlagOptions } from './args.js';
import { EXIT, UsageError } from './internal/usage-error.js';

/** Where jobs live, as `berth dev` and `berth serve` take it from flags and environment. */
export interface StoreArgs {
  kind: 'sqlite' | 'memory';
  /** Absolute data folder (SQLite file `berth.sqlite` inside). */
  dataDir: string;
  durability: 'normal' | 'full';
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
  'max-attempts': { type: 'string' },
  'worker-grace-ms': { type: 'string' },
};

export const STORE_HELP = `      --store <kind>      sqlite (default: durable, in --data-dir) or memory (nothing survives a restart)
      --data-dir <dir>    where the SQLite database lives (default ./.berth, or BERTH_DATA_DIR)
      --durability <lvl>  normal (default: survives a crash of the process) or full (fsync every commit:
                          also survives power loss, slower)
      --max-attempts <n>  attempts before a job whose worker keeps getting lost is FAILED (default 3)
      --worker-grace-ms <ms>  how long a disconnected worker keeps its running jobs, and how long running
                          jobs wait for their workers after a restart (default 10000)
`;

export const STORE_ENV_HELP = `  BERTH_STORE, BERTH_DATA_DIR, BERTH_DURABILITY  defaults of --store, --data-dir, --durability
`;

function whole(command: string, flag: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`${flag} must be a whole number >= ${min} (got "${value}")`, command);
  return Number(value);
}

/** Reads the store flags (falling back to `BERTH_STORE`, `BERTH_DATA_DIR`, `BERTH_DURABILITY`). */
export function parseStoreArgs(command: string, v: Record<string, unknown>, env: NodeJS.ProcessEnv, cwd: string): StoreArgs {
  const kind = (v['store'] as string | undefined) ?? env['BERTH_STORE'] ?? 'sqlite';
  if (kind !== 'sqlite' && kind !== 'memory') throw new UsageError(`--store must be sqlite or memory (got "${kind}")`, command);
  const durability = (v['durability'] as string | undefined) ?? env['BERTH_DURABILITY'] ?? 'normal';
  if (durability !== 'normal' && durability !== 'full') throw new UsageError(`--durability must be normal or full (got "${durability}")`, command);
  const dir = (v['data-dir'] as string | undefined) ?? env['BERTH_DATA_DIR'] ?? '.berth';
  if (dir.trim() === '') throw new UsageError('--data-dir must not be empty', command);
  return {
    kind,
    durability,
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
  /** Stored API keys (SQLite only). */
  keyStore?: KeyStore;
}

export async function openStore(args: StoreArgs): Promise<OpenedStore> {
  const server = await import('@berth/server');
  if (args.kind === 'memory') return { store: new server.MemoryStore(), where: 'in memory (nothing survives a restart)' };
  const file = resolve(args.dataDir, 'berth.sqlite');
  const store = new server.SqliteStore({ file, durability: args.durability });
  // API keys from `berth keys create` live in the same file (table api_keys).
  return { store, where: `${file} (SQLite, durability ${args.durability})`, keyStore: new server.SqliteKeyStore(store.db) };
}

/** `openStore`, or, when the store cannot be opened, a message on stderr and exit code 1. */
export async function openStoreOrExit(args: StoreArgs, stderr: NodeJS.WritableStream): Promise<OpenedStore | number> {
  try {
    return await openStore(args);
  } catch (err) {
    stderr.write(`berth: cannot open the data store in ${args.dataDir}: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.failure;
  }
}

/** Server options that come from the store flags. */
export function storeServerOptions(args: StoreArgs): { maxAttempts?: number; workerGraceMs?: number; filesDir?: string } {
  return {
    // Output files workers upload without S3 live next to the database (memory store: a temp folder).
    ...(args.kind === 'sqlite' ? { filesDir: join(args.dataDir, 'files') } : {}),
    ...(args.maxAttempts !== undefined ? { maxAttempts: args.maxAttempts } : {}),
    ...(args.workerGraceMs !== undefined ? { workerGraceMs: args.workerGraceMs } : {}),
  };
}

/** The banner line about the data and what was recovered. */
export function dataLine(where: string, recovered: { queued: number; running: number }): string {
  const found = recovered.queued + recovered.running;
  return `Data: ${where}${found > 0 ? `; recovered ${recovered.queued} queued and ${recovered.running} running jobs` : ''}`;
}
