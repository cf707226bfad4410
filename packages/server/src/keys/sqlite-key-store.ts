import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Database } from 'better-sqlite3';
import { openDatabase } from '../store/sqlite/open-database.js';
import { keyFromRow as fromRow, type KeyRow, type KeyStore, type StoredKey } from './key-store.js';

/**
 * API keys and worker tokens in SQLite, table `api_keys`, normally in the same file as the jobs (`<data-dir>/berth.sqlite`).
 * Creating the table is idempotent (`IF NOT EXISTS`), so the server and `berth keys` can both open the file in
 * any order. Every lookup reads the table, so `berth keys revoke` takes effect on a running server at once.
 */
export class SqliteKeyStore implements KeyStore {
  private readonly db: Database;
  private readonly owned: boolean;
  private readonly stmts;

  /** `db`: an open handle (not closed by `close()`) or a file path (opened in WAL mode, created if missing). */
  constructor(db: Database | string) {
    if (typeof db === 'string') {
      if (db !== ':memory:') mkdirSync(dirname(db), { recursive: true });
      this.db = openDatabase(db);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('busy_timeout = 5000');
      this.owned = true;
    } else {
      this.db = db;
      this.owned = false;
    }
    this.db.exec(`CREATE TABLE IF NOT EXISTS api_keys (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      hash TEXT NOT NULL,
      endpoints TEXT,
      read_only INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      revoked_at INTEGER
    )`);
    // Worker tokens share the table (kind 'worker'); a table made before them gets the column, existing rows 'api'.
    const columns = this.db.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('api_keys')`).all();
    if (!columns.some((c) => c.name === 'kind'))
      this.db.exec(`ALTER TABLE api_keys ADD COLUMN kind TEXT NOT NULL DEFAULT 'api'`);
    this.stmts = {
      insert: this.db.prepare(
        'INSERT INTO api_keys (id, name, hash, endpoints, read_only, kind, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      get: this.db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?'),
      list: this.db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id'),
      revoke: this.db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    };
  }

  async insert(k: StoredKey): Promise<void> {
    this.stmts.insert.run(
      k.id,
      k.name,
      k.hash,
      k.endpoints === null ? null : JSON.stringify(k.endpoints),
      k.readOnly ? 1 : 0,
      k.kind,
      k.createdAt,
      k.revokedAt,
    );
  }
  async get(id: string): Promise<StoredKey | undefined> {
    const r = this.stmts.get.get(id);
    return r && fromRow(r);
  }
  async list(): Promise<StoredKey[]> {
    return this.stmts.list.all().map(fromRow);
  }
  async revoke(id: string, now: number): Promise<boolean> {
    return this.stmts.revoke.run(now, id).changes === 1;
  }
  async close(): Promise<void> {
    if (this.owned && this.db.open) this.db.close();
  }
}
