import PQueue from 'p-queue';
import { LIMITS, type AssignMessage } from '@berth/protocol';
import type { Logger } from '../../logger.js';
import { errorMessage } from '../execute/error-message.js';
import { supersedeOlderAttempts } from './cancellation.js';
import { JobEntry, type Transport } from './job-entry.js';
import type { JobTable } from './job-table.js';

/** What assignment needs from the runtime. */
export interface AssignmentDeps {
  table: JobTable;
  log: Logger;
  send: Transport;
  /** Whether the connected server acknowledges results (`welcome.acks`). */
  serverAcks: () => boolean;
  concurrency: number;
  concurrencyModifier: ((current: number) => number) | undefined;
  /** Runs a queued job to its result. */
  run: (entry: JobEntry) => Promise<void>;
  /** After each job: the runtime's bookkeeping (a server drain may end). */
  afterJob: () => void;
  /** The runtime stopped: assignments are ignored. */
  isStopped: () => boolean;
  /** The worker is shutting down: concurrency changes are not announced. */
  isDraining: () => boolean;
}

// A/B ONLY (temporary, deleted after the measurement): BERTH_AB_QUEUE=fifo runs the hand FIFO instead of p-queue.
const AB_FIFO = process.env['BERTH_AB_QUEUE'] === 'fifo';

/**
 * Takes `job.assign` messages into the job table and runs them through a p-queue bounded by the concurrency, which
 * `concurrencyModifier` may change after each job (0 takes no new jobs; the queue keeps one slot). `onIdle()` is
 * the graceful drain's wait: every queued and running job has finished.
 */
export class Assignment {
  private current: number;
  private readonly queue: PQueue;
  private running = 0;
  private waiting: JobEntry[] = [];
  private head = 0;

  constructor(private readonly deps: AssignmentDeps) {
    this.current = deps.concurrency;
    this.queue = new PQueue({ concurrency: Math.max(1, deps.concurrency) });
  }

  get concurrency(): number {
    return this.current;
  }

  assign(msg: AssignMessage): void {
    const { table, log } = this.deps;
    if (this.deps.isStopped()) return;
    if (table.get(msg)) {
      log.warn('ignored a duplicate job.assign', { jobId: msg.id, attempt: msg.attempt });
      return;
    }
    supersedeOlderAttempts(table, msg);
    const entry = new JobEntry(
      msg,
      this.deps.send,
      log.child({ jobId: msg.id, attempt: msg.attempt }),
      this.deps.serverAcks,
    );
    table.add(entry);
    entry.log.info('job received');
    if (AB_FIFO) {
      this.waiting.push(entry);
      this.pump();
      return;
    }
    this.queue
      .add(() => this.runQueued(entry))
      .catch((err: unknown) => entry.log.error('runtime error', { error: errorMessage(err) }));
  }

  /** Drops jobs not yet started (the runtime stopped). */
  clear(): void {
    this.queue.clear();
    this.waiting = [];
    this.head = 0;
  }

  /** Resolves once no job is queued or running. */
  onIdle(): Promise<void> {
    return this.queue.onIdle();
  }

  /** Starts queued jobs while a slot is free. */
  private pump(): void {
    while (this.running < Math.max(1, this.current) && this.head < this.waiting.length) {
      const entry = this.waiting[this.head++] as JobEntry;
      if (this.head === this.waiting.length) this.clear();
      this.running++;
      this.runQueued(entry).then(this.slotFreed, (err: unknown) => {
        entry.log.error('runtime error', { error: errorMessage(err) });
        this.slotFreed();
      });
    }
  }

  private readonly slotFreed = (): void => {
    this.running--;
    this.pump();
  };

  private async runQueued(entry: JobEntry): Promise<void> {
    if (entry.state !== 'queued') return; // cancelled while queued
    await this.deps.run(entry);
    this.deps.table.sweep(entry);
    this.modifyConcurrency();
    this.deps.afterJob();
  }

  private modifyConcurrency(): void {
    const { concurrencyModifier: modifier, log } = this.deps;
    if (!modifier || this.deps.isStopped()) return;
    const concurrency = this.current;
    let next: unknown;
    try {
      next = modifier(concurrency);
    } catch (err) {
      log.error('concurrencyModifier threw; keeping the concurrency', { concurrency, error: errorMessage(err) });
      return;
    }
    const max = LIMITS.workerConcurrencyMax;
    if (typeof next !== 'number' || !Number.isInteger(next) || next < 0 || next > max) {
      log.warn(`concurrencyModifier must return a whole number from 0 to ${max}; keeping the concurrency`, {
        returned: String(next),
        concurrency,
      });
      return;
    }
    if (next === concurrency) return;
    log.info('concurrency changed', { from: concurrency, to: next });
    this.current = next;
    if (!this.deps.isDraining()) this.deps.send({ type: 'concurrency', concurrency: next });
    this.queue.concurrency = Math.max(1, next); // a raised concurrency starts queued jobs at once
    if (AB_FIFO) this.pump();
  }
}
