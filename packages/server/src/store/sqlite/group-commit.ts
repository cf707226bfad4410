import type { Database, Statement } from 'better-sqlite3';
import type { WalSync } from './wal-sync.js';

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
  /** Settles at its batch's COMMIT, without waiting for the fsync (see `write`). */
  early?: boolean;
}

/**
 * Group commit: the first write of an event-loop turn opens a transaction, every write of that turn joins it, and
 * one COMMIT (a WAL append) ends it on `setImmediate`. Each write's promise settles only after that COMMIT, so
 * nobody is told "accepted" before the data is durable. A write that throws is rolled back alone (savepoint); a
 * failed COMMIT rolls the whole batch back and rejects all of it.
 *
 * With `walSync` (durability `full`), a committed batch is durable only once the WAL is fsynced, and that fsync
 * runs off the event loop (`WalSync`). While an fsync runs, the open batch stays open past the end of its turn and
 * commits when that fsync completes: its writes could not settle before the next fsync anyway, and one COMMIT for
 * every turn of the wait writes each page it dirtied once (one WAL frame) instead of once per turn, so the next
 * fsync has less to flush. Waiters (and reads that may have seen those batches) settle after the fsync that covers
 * them, in commit order. A write made with `early` (a `/runsync` insert, a claim: nobody was told of them yet, as
 * PostgreSQL's asynchronous commits) settles at its COMMIT: it is safe from a crash of the process already, and
 * the next fsync (any other write's, or `sync()`) makes it survive a power loss too.
 */
export class GroupCommit {
  private waiters: Waiter[] = [];
  private open = false;
  /** The open batch waits for the fsync in flight (durability `full`) before it commits. */
  private deferred = false;
  /** Number of batches committed (for tests and metrics). */
  commits = 0;
  /** Prepared once: `db.exec` parses its SQL on every call, and these run for every write. */
  private readonly sql: Record<'begin' | 'commit' | 'savepoint' | 'release' | 'rollbackTo', Statement>;

  constructor(
    private readonly db: Database,
    /** Called after a batch was rolled back, so derived in-memory state can be rebuilt. */
    private readonly onRollback: () => void,
    /** Durability `full`: fsyncs the WAL after commits, off the event loop. */
    private readonly walSync?: WalSync,
  ) {
    this.sql = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      savepoint: db.prepare('SAVEPOINT op'),
      release: db.prepare('RELEASE op'),
      rollbackTo: db.prepare('ROLLBACK TO op'),
    };
  }

  /**
   * Runs `fn` inside the current batch; resolves with its result once the batch is committed. `oneStatement`: `fn`
   * changes the database with a single statement at most, which SQLite already undoes alone when it fails
   * (statement atomicity), so the savepoint that would undo a half-done write is not needed: two statements less
   * per insert and per claim. With a WAL fsync it also waits for the fsync that covers its batch, unless `early`.
   */
  write<T>(fn: () => T, oneStatement = false, early = false): Promise<T> {
    this.begin();
    let result: T;
    try {
      if (oneStatement) result = fn();
      else {
        this.sql.savepoint.run();
        try {
          result = fn();
          this.sql.release.run();
        } catch (err) {
          this.sql.rollbackTo.run();
          this.sql.release.run();
          throw err;
        }
      }
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<T>((resolve, reject) => this.waiters.push({ resolve: () => resolve(result), reject, early }));
  }

  /** With a WAL fsync: commits the open batch, then resolves once an fsync that began after it completed. */
  sync(): Promise<void> {
    const walSync = this.walSync;
    if (!walSync) return Promise.resolve(); // every commit is already as durable as it gets
    this.flush();
    return new Promise((resolve, reject) => walSync.after({ resolve, reject }));
  }

  /**
   * Runs a read; when a batch is open (or committed but not yet synced) the answer waits until it is durable:
   * nothing uncommitted is shown early.
   */
  read<T>(fn: () => T): Promise<T> {
    let result: T;
    try {
      result = fn();
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.open)
      return new Promise<T>((resolve, reject) => this.waiters.push({ resolve: () => resolve(result), reject }));
    if (this.walSync?.pending)
      return new Promise<T>((resolve, reject) => this.walSync!.after({ resolve: () => resolve(result), reject }));
    return Promise.resolve(result);
  }

  private begin(): void {
    if (this.open) return;
    this.sql.begin.run();
    this.open = true;
    setImmediate(this.turnEnded);
  }

  /** End of the batch's first turn: commit now, or once the fsync in flight is done. */
  private readonly turnEnded = (): void => {
    if (!this.walSync?.syncing) return this.flush();
    if (this.deferred) return;
    this.deferred = true;
    this.walSync.whenSynced(() => {
      this.deferred = false;
      this.flush();
    });
  };

  /** Commits the open batch now (also used by close). */
  flush(): void {
    if (!this.open) return;
    const waiters = this.waiters;
    this.waiters = [];
    this.open = false;
    try {
      this.sql.commit.run();
      this.commits++;
    } catch (err) {
      try {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
      } catch {
        // the connection is unusable; the next write reports it
      }
      this.onRollback();
      for (const w of waiters) w.reject(err);
      return;
    }
    if (!this.walSync) {
      for (const w of waiters) w.resolve();
      return;
    }
    // Early writes settle now; a batch of early writes only is not fsynced on its own (the next fsync covers it).
    const durable: Waiter[] = [];
    for (const w of waiters) {
      if (w.early) w.resolve();
      else durable.push(w);
    }
    if (durable.length > 0) this.walSync.after(...durable);
  }

  /** Commits the open batch and waits for the WAL syncs in flight (before closing). */
  async settle(): Promise<void> {
    this.flush();
    await this.walSync?.idle();
  }
}
