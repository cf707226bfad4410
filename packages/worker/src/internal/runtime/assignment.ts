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

/**
 * Takes `job.assign` messages into the job table and runs them through a queue bounded by the concurrency, which
 * `concurrencyModifier` may change after each job (0 takes no new jobs; the queue keeps one slot). The queue is a
 * plain FIFO with a running count: a job costs one promise chain, not a general-purpose queue's bookkeeping (why
 * not p-queue, measured: docs/benchmarks-history.md, "The worker's job queue: p-queue against the FIFO").
 */
export class Assignment {
  private current: number;
  private running = 0;
  private waiting: JobEntry[] = [];
  private head = 0;

  constructor(private readonly deps: AssignmentDeps) {
    this.current = deps.concurrency;
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
    this.waiting.push(entry);
    this.pump();
  }

  /** Drops jobs not yet started (the runtime stopped). */
  clear(): void {
    this.waiting = [];
    this.head = 0;
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
    this.pump(); // a raised concurrency starts queued jobs at once
  }
}
