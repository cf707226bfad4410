import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// Plain JavaScript, run with `eval: true` so it needs no file beside the compiled one (tests run the sources).
const THREAD_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
parentPort.on('message', (m) => {
  if (m === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  let frames = -1;
  try {
    const r = db.pragma('wal_checkpoint(PASSIVE)')[0];
    frames = r ? r.log : -1;
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message || err) });
    return;
  }
  parentPort.postMessage({ frames });
});
`;

/** How often a checkpoint is asked for while commits happen, ms. */
const CHECKPOINT_EVERY_MS = 1000;
/** A COMMIT that took this long wrote many pages (a big input or output): checkpoint at once, ms. */
const BIG_COMMIT_MS = 5;

/**
 * WAL checkpoints off the event loop (issue #31). SQLite's automatic checkpoint runs inside the COMMIT that crosses
 * `wal_autocheckpoint`, on the connection's thread: with a 19 MB input in the WAL that commit took 62-78 ms instead
 * of 16 ms, and every commit after a big payload paid it. The store's connection runs with `wal_autocheckpoint =
 * 0`, and this thread's own connection to the same file runs `PRAGMA wal_checkpoint(PASSIVE)` (which never waits
 * for nor blocks the writer) once a second while commits happen, and at once after a COMMIT that took 5 ms or more
 * (it wrote many pages: a big input or output). The next write
 * transaction after a complete checkpoint restarts the WAL from its start, as with automatic checkpoints, so the
 * WAL stays bounded. What a checkpoint syncs (the WAL, then the database file) is what SQLite's own does.
 */
export class Checkpointer {
  private readonly worker: Worker;
  private running = false;
  private wanted = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Checkpoints completed (for tests). */
  checkpoints = 0;
  /** WAL frames the last checkpoint saw (for tests). */
  lastFrames = 0;

  constructor(file: string, onError: (message: string) => void = () => {}) {
    const module = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(THREAD_CODE, { eval: true, workerData: { file, module } });
    this.worker.unref();
    this.worker.on('message', (m: { frames?: number; error?: string }) => {
      this.running = false;
      if (m.error !== undefined) onError(m.error);
      else {
        this.checkpoints++;
        this.lastFrames = m.frames ?? 0;
      }
      if (this.wanted) this.soon();
    });
    this.worker.on('error', (err) => onError(err.message));
  }

  /** A COMMIT took `ms`: a checkpoint within a second, at once after a slow (big) one. */
  committed(ms = 0): void {
    if (this.closed) return;
    if (ms >= BIG_COMMIT_MS) return this.run();
    this.wanted = true;
    if (!this.running) this.soon();
  }

  private soon(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run();
    }, CHECKPOINT_EVERY_MS);
    this.timer.unref();
  }

  private run(): void {
    if (this.closed) return;
    if (this.running) {
      this.wanted = true;
      return;
    }
    this.wanted = false;
    this.running = true;
    this.worker.postMessage('run');
  }

  /** Stops the thread and closes its connection (before the store's own connection closes). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage('close');
    await exited;
  }
}
