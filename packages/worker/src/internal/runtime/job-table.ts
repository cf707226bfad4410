import { type JobEntry, jobKey } from './job-entry.js';
import { createWaiters } from './waiters.js';

/** A job attempt as the wire names it. */
export interface JobRef {
  id: string;
  attempt: number;
}

/**
 * The job attempts this worker holds, from `job.assign` until the control plane has their result (acknowledged,
 * or sent to a server that does not acknowledge). `sweep()` forgets delivered entries and wakes `until*` waiters.
 */
export class JobTable {
  private readonly entries = new Map<string, JobEntry>();
  /** How many attempts of each job id are held: a new attempt scans for older ones only when there are some. */
  private readonly perId = new Map<string, number>();
  private readonly waiters = createWaiters();

  /** Jobs received and not yet finished. */
  get active(): number {
    let n = 0;
    for (const entry of this.entries.values()) if (entry.state !== 'finished') n++;
    return n;
  }

  /** Entries held, finished ones whose result is not yet delivered included. */
  get size(): number {
    return this.entries.size;
  }

  get(ref: JobRef): JobEntry | undefined {
    return this.entries.get(jobKey(ref.id, ref.attempt));
  }

  /** Adds an entry; false (and nothing added) when that attempt is already held. */
  add(entry: JobEntry): boolean {
    if (this.entries.has(entry.key)) return false;
    this.entries.set(entry.key, entry);
    this.perId.set(entry.spec.id, (this.perId.get(entry.spec.id) ?? 0) + 1);
    return true;
  }

  /** Whether any attempt of job `id` is held. */
  holdsJob(id: string): boolean {
    return this.perId.has(id);
  }

  values(): IterableIterator<JobEntry> {
    return this.entries.values();
  }

  /** The first `max` attempts held, for `hello.inflight`. */
  refs(max: number): JobRef[] {
    return [...this.entries.values()].slice(0, max).map((e) => e.ref);
  }

  /**
   * Forgets delivered entries and re-checks the waiters. With `entry`, only that one is checked (a job finished or
   * was acknowledged: nothing else changed), which keeps the per-job cost flat however many jobs are held.
   */
  sweep(entry?: JobEntry): void {
    if (entry) {
      if (entry.delivered && this.entries.get(entry.key) === entry) this.remove(entry);
    } else {
      for (const held of this.entries.values()) if (held.delivered) this.remove(held);
    }
    this.waiters.notify();
  }

  private remove(entry: JobEntry): void {
    this.entries.delete(entry.key);
    const n = (this.perId.get(entry.spec.id) ?? 1) - 1;
    if (n > 0) this.perId.set(entry.spec.id, n);
    else this.perId.delete(entry.spec.id);
  }

  /** Resolves once no job is running or queued. */
  untilIdle(): Promise<void> {
    return this.waiters.until(() => this.active === 0);
  }

  /** Resolves once every result is delivered. */
  untilEmpty(): Promise<void> {
    return this.waiters.until(() => this.entries.size === 0);
  }

  /** Drops pending waits (the runtime stopped). */
  clearWaiters(): void {
    this.waiters.clear();
  }
}
