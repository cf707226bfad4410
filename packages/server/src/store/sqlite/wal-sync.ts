import { closeSync, fsync, openSync } from 'node:fs';

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Durability `full` without blocking the event loop: the connection runs with `synchronous=NORMAL` (a COMMIT
 * writes the WAL and returns) and this fsyncs the WAL file on libuv's thread pool. One fsync at a time; what was
 * committed while one ran waits for the next, which covers all of it (fsync makes durable every write made to the
 * file before the call). Waiters settle in the order they were added. SQLite's own checkpoints still sync the WAL
 * before copying it back and the database file after, as under `synchronous=FULL`.
 */
export class WalSync {
  private readonly fd: number;
  /** Committed, waiting for an fsync that starts after their commit. */
  private queued: Waiter[] = [];
  private running = false;
  private idleWaiters: (() => void)[] = [];
  /** Run once the fsync in flight has completed (`whenSynced`). */
  private syncedHooks: (() => void)[] = [];
  /** Number of fsyncs completed (for tests and metrics). */
  syncs = 0;

  constructor(walFile: string) {
    this.fd = openSync(walFile, 'r');
  }

  /** True while some committed data is not yet known to be durable. */
  get pending(): boolean {
    return this.running || this.queued.length > 0;
  }

  /** Settles `waiters` after an fsync that starts now or later (their data is already written). */
  after(...waiters: Waiter[]): void {
    this.queued.push(...waiters);
    this.start();
  }

  /** True while an fsync runs. */
  get syncing(): boolean {
    return this.running;
  }

  /**
   * Runs `fn` once the fsync in flight has completed and its waiters were settled, before the next fsync starts
   * (at once when none runs): what `fn` commits and hands to `after` is covered by that next fsync.
   */
  whenSynced(fn: () => void): void {
    if (this.running) this.syncedHooks.push(fn);
    else fn();
  }

  /** Resolves when no fsync runs and none is queued. */
  idle(): Promise<void> {
    if (!this.pending) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private start(): void {
    if (this.running) return;
    if (this.queued.length === 0) {
      for (const r of this.idleWaiters.splice(0)) r();
      return;
    }
    const batch = this.queued;
    this.queued = [];
    this.running = true;
    fsync(this.fd, (err) => {
      this.running = false;
      this.syncs++;
      if (err) for (const w of batch) w.reject(err);
      else for (const w of batch) w.resolve();
      for (const fn of this.syncedHooks.splice(0)) fn();
      this.start();
    });
  }

  /** Closes the file (after `idle()`). */
  close(): void {
    closeSync(this.fd);
  }
}
