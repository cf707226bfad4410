import { AsyncResource } from 'node:async_hooks';
import type { BatchHandler } from '../../batch.js';
import type { Handler, Job } from '../../handler.js';
import { BatchSlot } from './batch-slot.js';
import { runBatch } from './run-batch.js';

/** `StartOptions.batch` resolved. */
export interface ResolvedBatch {
  maxSize: number;
  maxWaitMs: number;
}

/** The clock and timer of the batch wait (tests pass a manual one). */
export interface BatchTimers {
  now(): number;
  setTimeout(fn: () => void, ms: number): { cancel(): void };
}

const REAL_TIMERS: BatchTimers = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  },
};

/**
 * Turns a batch handler into a per-job handler, so batched jobs run through the same single-job path as any other
 * (input check, retries, signal, progress, logs, stream chunks, results): each per-job call joins the forming
 * batch and waits for its slot. One batch runs at a time; jobs arriving meanwhile form the next one.
 *
 * When a batch starts: at once when it is full (`maxSize`); at once when the worker is idle (the previous batch held
 * one job and nothing arrived while it ran: a lone job never waits); otherwise (under load) once it holds as many
 * jobs as the previous batch did (the clients a batch answered tend to come back together), or once `maxWaitMs` has
 * passed since its first job joined or the previous batch ended, whichever is later (jobs queued behind a batch
 * then wait for the clients it answered to send their next jobs, instead of leaving in a small batch). Jobs of the
 * same event-loop turn (one socket read, one `job-take-batch` answer) always join the same batch. A job whose signal fires while its batch forms leaves it; in a running batch, its call ends at
 * once (the handler sees `jobs[i].signal` fire; its slot's output is dropped).
 *
 * @example
 * const batcher = new Batcher(async (jobs) => jobs.map((j) => j.input), { maxSize: 8, maxWaitMs: 5 });
 * start({ handler: batcher.handler, concurrency: 8 });
 */
export class Batcher {
  /** The per-job handler the runtime calls (a generator function when the batch handler streams). */
  readonly handler: Handler;
  /** Called as each batch starts, with its size. */
  onBatch: ((size: number) => void) | undefined;
  private forming: BatchSlot[] = [];
  private busy = false;
  /** Jobs arrived while the previous batch ran, or it held several: a new batch waits up to `maxWaitMs`. */
  private loaded = false;
  /** Jobs in the last batch started: under load, a forming batch that has as many starts without waiting more. */
  private lastSize = 0;
  /** When the last batch ended: jobs that queued behind it wait from then, not from their arrival. */
  private freeSince = Number.NEGATIVE_INFINITY;
  private turnScheduled = false;
  private timer: { cancel(): void } | undefined;
  /** Batch calls run outside every job's async context, so `console.*` in them is not charged to one job. */
  private readonly scope = new AsyncResource('berth.batch');

  constructor(
    private readonly batchHandler: BatchHandler,
    readonly options: ResolvedBatch,
    readonly streaming: boolean,
    private readonly timers: BatchTimers = REAL_TIMERS,
  ) {
    const join = (job: Job): BatchSlot => {
      const slot = new BatchSlot(job, this.timers.now(), streaming, (s) => this.leave(s));
      this.forming.push(slot);
      if (this.busy) this.loaded = true;
      this.schedule();
      return slot;
    };
    this.handler = streaming ? (job) => join(job).stream() : (job) => join(job).result();
  }

  private schedule(): void {
    if (this.busy) return; // the running batch's end starts the next
    if (this.forming.length >= this.options.maxSize) return this.start();
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    // After this turn: the other jobs of the same read join first.
    this.scope.runInAsyncScope(() =>
      setImmediate(() => {
        this.turnScheduled = false;
        this.decide();
      }),
    );
  }

  private decide(): void {
    if (this.busy || this.forming.length === 0) return;
    const first = this.forming[0] as BatchSlot;
    const waitMs = Math.max(first.arrived, this.freeSince) + this.options.maxWaitMs - this.timers.now();
    const enough = Math.min(this.options.maxSize, this.lastSize);
    if (!this.loaded || this.forming.length >= enough || waitMs <= 0) return this.start();
    if (this.timer) return;
    this.timer = this.scope.runInAsyncScope(() =>
      this.timers.setTimeout(() => {
        this.timer = undefined;
        this.decide();
      }, waitMs),
    );
  }

  private start(): void {
    this.timer?.cancel();
    this.timer = undefined;
    const slots = this.forming.splice(0, this.options.maxSize);
    if (slots.length === 0) return;
    for (const slot of slots) slot.state = 'running';
    this.busy = true;
    this.loaded = slots.length > 1;
    this.lastSize = slots.length;
    this.onBatch?.(slots.length);
    void this.scope.runInAsyncScope(() =>
      runBatch(this.batchHandler, slots).finally(() => {
        this.busy = false;
        this.freeSince = this.timers.now();
        if (this.forming.length > 0) this.schedule();
      }),
    );
  }

  /** A job's signal fired: it leaves the forming batch, or ends its call in a running one. */
  private leave(slot: BatchSlot): void {
    if (slot.state === 'forming') this.forming = this.forming.filter((s) => s !== slot);
    slot.reject(slot.job.signal.reason);
  }
}
