import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DuplicateJobError } from '../../errors.js';
import type { Op, OpName } from './sqlite-core.js';
import type { BatchAnswer, SerializedError, StoreThreadData } from './store-thread.js';

/** Operations that can put a job in a queue. */
const QUEUEING: ReadonlySet<OpName> = new Set<OpName>(['insert', 'retry', 'requeue', 'recover']);

interface Waiter {
  resolve: (v: unknown) => void;
  reject: (err: unknown) => void;
}

/** Turns an error posted by the store thread back into the error the caller expects (`DuplicateJobError`). */
function revive(e: SerializedError): Error {
  if (e.name === 'DuplicateJobError' && e.jobId !== undefined) return new DuplicateJobError(e.jobId);
  const err = new Error(e.message) as Error & { code?: string };
  if (e.name !== 'Error') err.name = e.name;
  if (e.code !== undefined) err.code = e.code;
  return err;
}

/** Starts `store-thread.js`; from the TypeScript sources (tests, `tsx`), `store-thread.ts` through tsx. */
function startThread(data: StoreThreadData): Worker {
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./store-thread.js', import.meta.url), { workerData: data });
  const tsxDir = dirname(createRequire(import.meta.url).resolve('tsx/package.json'));
  const tsx = pathToFileURL(join(tsxDir, 'dist/esm/api/index.mjs')).href; // the `import` condition of tsx/esm/api
  const entry = new URL('./store-thread.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(boot, { eval: true, workerData: data });
}

/**
 * Pipelined group commit on a worker thread: operations of an event-loop turn form a batch, sent to the store
 * thread (`store-thread.ts`) which runs it as one transaction and COMMITs it off the event loop. While batch k is
 * on the thread, batch k+1 fills (every operation issued meanwhile); it is sent when k's answer arrives, so
 * batches grow with load by themselves. Each operation's promise settles only after its batch's COMMIT (reads too:
 * nothing uncommitted is shown early), in order.
 */
export class ThreadCommit {
  private readonly worker: Worker;
  private ops: Op[] = [];
  private waiters: Waiter[] = [];
  private inFlight: Waiter[] | undefined;
  private scheduled = false;
  private broken: Error | undefined;
  private closing = false;
  private idleWaiters: (() => void)[] = [];
  /** Batches with at least one write committed so far. */
  commits = 0;
  /** Endpoints with queued jobs after the last batch answered (unknown before the first answer). */
  private queued: Set<string> | undefined;
  /** Operations sent or waiting that may queue a job (an insert, a retry, a requeue, a failed batch's rebuild). */
  private mayQueue = 0;
  private mayQueueInFlight = 0;

  constructor(data: StoreThreadData) {
    this.worker = startThread(data);
    this.worker.on('message', (m: BatchAnswer) => this.answered(m));
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => {
      if (!this.closing) this.fail(new Error(`the SQLite store thread stopped (exit code ${code})`));
    });
    this.worker.unref();
  }

  /**
   * True when a claim on `endpointId` would find nothing, known without asking the thread: its queue was empty after
   * the last batch, and nothing sent or waiting since can queue a job.
   */
  surelyEmpty(endpointId: string): boolean {
    return (
      this.queued !== undefined && this.mayQueue === 0 && this.mayQueueInFlight === 0 && !this.queued.has(endpointId)
    );
  }

  /** Adds `op` to the batch that fills now; resolves with its result once that batch is committed. */
  run(op: Op): Promise<unknown> {
    if (this.broken) return Promise.reject(this.broken);
    if (QUEUEING.has(op[0])) this.mayQueue++;
    return new Promise((resolve, reject) => {
      this.ops.push(op);
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.inFlight || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.send();
    });
  }

  private send(): void {
    if (this.inFlight || this.ops.length === 0) return;
    this.inFlight = this.waiters;
    this.mayQueueInFlight = this.mayQueue;
    this.mayQueue = 0;
    const ops = this.ops;
    this.ops = [];
    this.waiters = [];
    try {
      this.worker.postMessage(ops);
    } catch (err) {
      // Not cloneable (a value that is not plain data): nothing was sent, so the batch fails alone.
      const batch = this.inFlight;
      this.inFlight = undefined;
      this.mayQueueInFlight = 0;
      for (const w of batch) w.reject(err);
      if (this.ops.length) this.schedule();
      else for (const r of this.idleWaiters.splice(0)) r();
      return;
    }
    this.worker.ref(); // a batch on the thread keeps the process alive until it is answered
  }

  private answered(m: BatchAnswer): void {
    const batch = this.inFlight ?? [];
    this.inFlight = undefined;
    this.commits = m.commits;
    this.queued = new Set(m.queued);
    this.mayQueueInFlight = 0;
    if ('failed' in m) {
      const err = revive(m.failed);
      for (const w of batch) w.reject(err);
    } else {
      for (let i = 0; i < batch.length; i++) {
        const r = m.results[i];
        if (r && 'v' in r) batch[i]!.resolve(r.v);
        else batch[i]!.reject(r ? revive(r.e) : new Error('the SQLite store thread answered fewer results than asked'));
      }
    }
    if (this.ops.length) this.schedule();
    else {
      this.worker.unref();
      for (const r of this.idleWaiters.splice(0)) r();
    }
  }

  private fail(err: Error): void {
    this.broken ??= err;
    const all = [...(this.inFlight ?? []), ...this.waiters];
    this.inFlight = undefined;
    this.ops = [];
    this.waiters = [];
    for (const w of all) w.reject(err);
    for (const r of this.idleWaiters.splice(0)) r();
  }

  /** Sends what is pending, waits for every batch to be answered, then stops the thread (closing its connection). */
  async close(): Promise<void> {
    if (!this.broken && (this.inFlight || this.ops.length)) {
      await new Promise<void>((resolve) => {
        this.idleWaiters.push(resolve);
        this.schedule();
      });
    }
    this.closing = true;
    if (this.broken) {
      await this.worker.terminate();
      return;
    }
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.ref();
    this.worker.postMessage('close');
    await exited;
  }
}
