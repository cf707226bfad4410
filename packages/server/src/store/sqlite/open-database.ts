import { createRequire } from 'node:module';
import type { Database } from 'better-sqlite3';
import { migrate } from './schema.js';
import { MissingDependencyError } from '../../errors.js';

type DatabaseConstructor = new (file: string, options?: { readonly?: boolean }) => Database;
let ctor: DatabaseConstructor | undefined;

/**
 * Opens a SQLite database with better-sqlite3, loaded on first use: `@berth/server` (and `--store memory`) works
 * even where the native addon was not built, and a missing addon gets a message that says what to do.
 */
export function openDatabase(file: string): Database {
  if (!ctor) {
    try {
      ctor = createRequire(import.meta.url)('better-sqlite3') as DatabaseConstructor;
    } catch (err) {
      throw new MissingDependencyError(
        'better-sqlite3',
        `the SQLite store needs the better-sqlite3 package, which is not installed or whose native addon was not built (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); run \`npm install better-sqlite3\` (or \`npm rebuild better-sqlite3\`), or use --store memory`,
        { cause: err },
      );
    }
  }
  try {
    return new ctor(file);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    if (/bindings|\.node|NODE_MODULE_VERSION/.test(msg)) {
      throw new MissingDependencyError(
        'better-sqlite3',
        `better-sqlite3's native addon could not be loaded (${msg.split('\n')[0]}); run \`npm rebuild better-sqlite3\`, or use --store memory`,
        { cause: err },
      );
    }
    throw err;
  }
}

/** Pages of WAL after which a commit checkpoints (SQLite's default: 1,000). */
export const WAL_CHECKPOINT_PAGES = 4000;

/**
 * Durability `normal` on a file: pages of WAL after which the store's own connection checkpoints, a backstop for
 * the checkpoint thread (checkpointer.ts), which has copied nearly all of them back by then.
 */
export const WAL_BACKSTOP_PAGES = 16_000;

/**
 * The job store's database: WAL, the `synchronous` level, migrations applied; closed again on failure.
 * `walSyncedByCaller`: durability `full` whose per-commit WAL fsync the caller does off the event loop
 * (`WalSync`), so SQLite runs with `synchronous=NORMAL` (its checkpoints still sync as under FULL).
 */
export function openStoreDatabase(file: string, durability: 'normal' | 'full', walSyncedByCaller = false): Database {
  const db = openDatabase(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${durability === 'full' && !walSyncedByCaller ? 'FULL' : 'NORMAL'}`);
    db.pragma('busy_timeout = 5000');
    // Checkpoint every ~16 MB of WAL instead of every 4 MB (SQLite's 1,000 pages): the pages every commit touches
    // (queue index tail, counters) are copied back and fsynced a quarter as often.
    db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
    // Up to 64 MiB of page cache (default 2 MiB): a deep queue's id index stays in memory (a finish or a status
    // read of a random id no longer reads pages back from the OS); it is only allocated as pages are used.
    db.pragma('cache_size = -65536');
    db.pragma('foreign_keys = ON');
    migrate(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
