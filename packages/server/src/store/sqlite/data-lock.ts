import type { Database } from 'better-sqlite3';
import { openDatabase } from './open-database.js';

/**
 * One control plane per database file, enforced by the operating system: `<file>-lock` is a small SQLite
 * database whose owner keeps a write transaction open (`BEGIN IMMEDIATE`: SQLite's RESERVED lock, an fcntl lock)
 * for as long as it runs. The OS drops that lock the moment the owner's process ends, however it ends (kill -9,
 * a crash, a zombie not yet reaped, a container restart that reuses pids), so a restart on the same folder never
 * waits and never mistakes an unrelated process for the owner. A second live control plane gets SQLITE_BUSY and a
 * message naming the owner's pid, which it can still read (RESERVED allows readers).
 */
export class DataLock {
  private constructor(private readonly db: Database) {}

  static acquire(dbFile: string): DataLock {
    const path = `${dbFile}-lock`;
    const db = openDatabase(path);
    try {
      db.pragma('busy_timeout = 0');
      db.exec(
        'CREATE TABLE IF NOT EXISTS owner (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, since INTEGER NOT NULL)',
      );
      db.exec('BEGIN IMMEDIATE');
    } catch (err) {
      const busy = (err as { code?: string }).code === 'SQLITE_BUSY';
      const owner = busy ? ownerOf(db) : undefined;
      db.close();
      if (busy)
        throw new Error(
          `${dbFile} is in use by another Berth control plane${owner ? ` (pid ${owner})` : ''}; stop it or use another --data-dir`,
        );
      throw err;
    }
    // Inside the held transaction: readers (a refused second server) see the previous owner's row until it commits,
    // which it never does; so write the pid outside it once, then take the lock again.
    db.exec('ROLLBACK');
    db.prepare('INSERT OR REPLACE INTO owner (id, pid, since) VALUES (1, ?, ?)').run(process.pid, Date.now());
    try {
      db.exec('BEGIN IMMEDIATE');
    } catch (err) {
      db.close();
      throw new Error(`${dbFile} was taken by another Berth control plane while starting (${String(err)})`);
    }
    return new DataLock(db);
  }

  /** Ends the transaction and closes the lock database (the file stays: deleting it would race a new owner). */
  release(): void {
    if (this.db.open) this.db.close();
  }
}

function ownerOf(db: Database): number | undefined {
  try {
    return (db.prepare('SELECT pid FROM owner WHERE id = 1').get() as { pid: number } | undefined)?.pid;
  } catch {
    return undefined;
  }
}
