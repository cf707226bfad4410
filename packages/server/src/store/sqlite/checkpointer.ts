import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the event loop (durability `normal`): a worker thread with its own connection runs
 * `wal_checkpoint(PASSIVE)` every `everyMs`, copying committed WAL frames back into the database file (and
 * syncing both) while the store's connection keeps writing. Inside `COMMIT` on the event loop, a checkpoint of
 * 4,000 pages took 40-50 ms (issue #40: the longest stalls of a retention sweep). The store's connection keeps an
 * automatic checkpoint as a backstop at a larger size: by then the thread has copied nearly every frame, so it
 * only finishes the tail and lets the next write start the WAL over.
 */
export class Checkpointer {
  private readonly worker: Worker;
  /** Checkpoints the thread ran, and the last failure it saw (for tests). */
  runs = 0;
  lastError: string | undefined;

  constructor(file: string, everyMs = CHECKPOINT_EVERY_MS) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(THREAD, { eval: true, workerData: { file, driver, everyMs } });
    this.worker.unref();
    this.worker.on('message', (m: { ran?: boolean; error?: string }) => {
      if (m.ran) this.runs++;
      if (m.error) this.lastError = m.error;
    });
    this.worker.on('error', (err) => (this.lastError = String(err)));
  }

  /** Stops the thread (its connection closes; an unfinished checkpoint is simply done later by another). */
  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

/** How often the thread checkpoints. */
export const CHECKPOINT_EVERY_MS = 100;

const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 0');
setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ran: true });
  } catch (err) {
    parentPort.postMessage({ error: String(err) });
  }
}, workerData.everyMs);
`;
