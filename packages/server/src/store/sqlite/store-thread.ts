import { parentPort, workerData } from 'node:worker_threads';
import { openStoreDatabase } from './open-database.js';
import { SqliteCore, type Op } from './sqlite-core.js';

/**
 * The store thread (`ThreadCommit`): owns the connection and runs each batch it is sent as one transaction (a
 * savepoint per operation, so an operation that throws is undone alone), then COMMIT (with `durability: full`,
 * SQLite's own fsync, here off the event loop), then posts every result back in order. Checkpoints run here too.
 */
export interface StoreThreadData {
  file: string;
  durability: 'normal' | 'full';
}

/** An operation's outcome, as posted back: a value, or an error reduced to what survives a structured clone. */
export type OpResult = { v: unknown } | { e: SerializedError };
export interface SerializedError {
  name: string;
  message: string;
  code?: string;
  jobId?: string;
}
/** A batch's answer: one result per operation, or the COMMIT's error for all of them; batches committed so far. */
export type BatchAnswer = ({ results: OpResult[] } | { failed: SerializedError }) & {
  commits: number;
  /** Endpoints with queued jobs once the batch ended: an empty queue's claim is answered without the thread. */
  queued: string[];
};

export function serializeError(err: unknown): SerializedError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const e = err as Error & { code?: unknown; jobId?: unknown };
  return {
    name: e.name,
    message: e.message,
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    ...(typeof e.jobId === 'string' ? { jobId: e.jobId } : {}),
  };
}

const port = parentPort;
if (port) {
  const { file, durability } = workerData as StoreThreadData;
  const db = openStoreDatabase(file, durability);
  const core = new SqliteCore(db);
  const sql = {
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    savepoint: db.prepare('SAVEPOINT op'),
    release: db.prepare('RELEASE op'),
    rollbackTo: db.prepare('ROLLBACK TO op'),
    changes: db.prepare('SELECT total_changes()').pluck(),
  };
  let commits = 0;
  port.on('message', (batch: Op[] | 'close') => {
    if (batch === 'close') {
      db.close();
      port.close();
      return;
    }
    const before = sql.changes.get();
    const results: OpResult[] = [];
    try {
      sql.begin.run();
      for (const [name, args] of batch) {
        sql.savepoint.run();
        try {
          results.push({ v: (core[name] as (...a: unknown[]) => unknown)(...args) });
          sql.release.run();
        } catch (err) {
          sql.rollbackTo.run();
          sql.release.run();
          results.push({ e: serializeError(err) });
        }
      }
      const wrote = sql.changes.get() !== before;
      sql.commit.run();
      if (wrote) commits++;
    } catch (err) {
      try {
        if (db.inTransaction) db.exec('ROLLBACK');
      } catch {
        // the connection is unusable; the next batch reports it
      }
      core.live.rebuild();
      port.postMessage({
        failed: serializeError(err),
        commits,
        queued: core.live.queuedEndpoints(),
      } satisfies BatchAnswer);
      return;
    }
    port.postMessage({ results, commits, queued: core.live.queuedEndpoints() } satisfies BatchAnswer);
  });
}
