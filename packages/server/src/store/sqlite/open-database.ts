import { createRequire } from 'node:module';
import type { Database } from 'better-sqlite3';
import { migrate } from './schema.js';

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
      throw new Error(`better-sqlite3 is not installed or its native addon was not built (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); run \`npm rebuild better-sqlite3\`, or use --store memory`);
    }
  }
  try {
    return new ctor(file);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    if (/bindings|\.node|NODE_MODULE_VERSION/.test(msg)) {
      throw new Error(`better-sqlite3's native addon could not be loaded (${msg.split('\n')[0]}); run \`npm rebuild better-sqlite3\`, or use --store memory`);
    }
    throw err;
  }
}

/** The job store's database: WAL, the chosen `synchronous` level, migrations applied; closed again on failure. */
export function openStoreDatabase(file: string, durability: 'normal' | 'full'): Database {
  const db = openDatabase(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    migrate(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
