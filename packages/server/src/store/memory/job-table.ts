import type { JobStatus } from '@berth/protocol';
import { isTerminal } from '@berth/protocol';
import { DeadlineHeap } from './deadline-heap.js';
import { EndpointQueue } from './endpoint-queue.js';
import type { ClaimLane, DueJobs, EndpointCounts, JobRecord } from '../types.js';

/** A job in the table. */
export interface Entry {
  rec: JobRecord;
  /** Stream chunks of the current attempt. */
  chunks: unknown[];
  /** Index of the first chunk not yet delivered to a reader. */
  delivered: number;
  /** The stamp of its place in its endpoint queue while IN_QUEUE. */
  queueSeq: number;
  /** A job of a DRAFT batch: IN_QUEUE but in no queue and no count until its batch releases it. */
  held?: boolean;
}

interface EndpointState {
  queue: EndpointQueue;
  /** Released batch jobs: claimed only when `queue` has none (batch-types.ts). */
  batchQueue: EndpointQueue;
  byStatus: Record<JobStatus, number>;
  completed: number;
  failed: number;
  retried: number;
}

/**
 * The memory store's jobs and their indexes: the entries by id, each endpoint's queue and counters, and the
 * deadline heaps (validated lazily, so a sweep costs O(due jobs x log n), not O(all jobs)).
 *
 * Records are copied on write, never on read: a write replaces its entry's record with a changed copy (`edit`),
 * so a record handed out (by a read or a write) never changes after, and callers, which never mutate records
 * they get from a store, can keep it as the snapshot it was. `add` keeps the caller's object as it is.
 */
export class JobTable {
  readonly jobs = new Map<string, Entry>();
  private readonly endpoints = new Map<string, EndpointState>();
  readonly ttlHeap = new DeadlineHeap();
  readonly execHeap = new DeadlineHeap();
  readonly retainHeap = new DeadlineHeap();
  readonly leaseHeap = new DeadlineHeap();

  private ep(endpointId: string): EndpointState {
    let s = this.endpoints.get(endpointId);
    if (!s) {
      const byStatus = { IN_QUEUE: 0, IN_PROGRESS: 0, COMPLETED: 0, FAILED: 0, CANCELLED: 0, TIMED_OUT: 0 };
      const live = (id: string, seq: number) => {
        const e = this.jobs.get(id);
        return e?.rec.status === 'IN_QUEUE' && e.queueSeq === seq;
      };
      s = {
        queue: new EndpointQueue(live),
        batchQueue: new EndpointQueue(live),
        byStatus,
        completed: 0,
        failed: 0,
        retried: 0,
      };
      this.endpoints.set(endpointId, s);
    }
    return s;
  }

  /** Adds a new job (its id not in the table), queued if IN_QUEUE (`held`: an IN_QUEUE job of a DRAFT batch). */
  add(job: JobRecord, held = false): Entry {
    const e: Entry = { rec: job, chunks: [], delivered: 0, queueSeq: 0 };
    this.jobs.set(job.id, e);
    const s = this.ep(job.endpointId);
    if (held) {
      e.held = true;
      this.ttlHeap.push(job.expiresAt, job.id);
      return e;
    }
    s.byStatus[job.status]++;
    if (job.status === 'COMPLETED') s.completed++;
    if (job.status === 'FAILED' || job.status === 'TIMED_OUT') s.failed++;
    this.ttlHeap.push(job.expiresAt, job.id);
    if (job.retainUntil !== undefined) this.retainHeap.push(job.retainUntil, job.id);
    if (job.status === 'IN_QUEUE') this.enqueue(e);
    return e;
  }

  /** Takes the job out of the table (and out of its queue, whose place goes stale). */
  remove(e: Entry): void {
    if (!e.held) this.ep(e.rec.endpointId).byStatus[e.rec.status]--;
    this.jobs.delete(e.rec.id);
  }

  /**
   * The entry's record, replaced by a copy that the write then changes (and returns). `ending`: a terminal
   * write, whose copy leaves the running deadlines out (rather than `delete` them after: a deletion turns the
   * object into a slow dictionary-mode one, for every later read and copy).
   */
  edit(e: Entry, ending = false): JobRecord {
    if (ending) {
      const { executionDeadline: _deadline, leaseUntil: _lease, ...rest } = e.rec;
      e.rec = rest;
    } else e.rec = Object.assign({}, e.rec); // not `{ ...rec }`: adding keys to a spread copy costs ~5 µs (V8)
    return e.rec;
  }

  /** Call on a record `edit` returned. */
  setStatus(e: Entry, status: JobStatus): void {
    const s = this.ep(e.rec.endpointId);
    if (e.held) e.held = false;
    else s.byStatus[e.rec.status]--;
    s.byStatus[status]++;
    e.rec.status = status;
    if (status === 'COMPLETED') s.completed++;
    if (status === 'FAILED' || status === 'TIMED_OUT') s.failed++;
  }

  /** Counts one more retry (a requeue or a retry) for the job's endpoint. */
  countRetry(e: Entry): void {
    this.ep(e.rec.endpointId).retried++;
  }

  /** Puts the job at the back of its endpoint's queue (its status already IN_QUEUE). */
  enqueue(e: Entry): void {
    const s = this.ep(e.rec.endpointId);
    e.queueSeq = (e.rec.batchId === undefined ? s.queue : s.batchQueue).push(e.rec.id);
  }

  /** A held job of a released batch joins its endpoint's batch queue. */
  release(e: Entry): void {
    e.held = false;
    this.ep(e.rec.endpointId).byStatus.IN_QUEUE++;
    this.enqueue(e);
  }

  /**
   * The oldest queued job of the endpoint, batch jobs after every other, taken off its queue (still IN_QUEUE);
   * `lane` (types.ts `ClaimLane`): from that queue only.
   */
  dequeue(endpointId: string, lane?: ClaimLane): Entry | undefined {
    const s = this.endpoints.get(endpointId);
    const id =
      lane === 'batch'
        ? s?.batchQueue.shift()
        : lane === 'interactive'
          ? s?.queue.shift()
          : (s?.queue.shift() ?? s?.batchQueue.shift());
    return id === undefined ? undefined : this.jobs.get(id);
  }

  /** Empties the endpoint's queue; returns the entries that were queued, oldest first. */
  drain(endpointId: string): Entry[] {
    const ids = this.endpoints.get(endpointId)?.queue.drain() ?? [];
    return ids.map((id) => this.jobs.get(id)!);
  }

  /** How many released batch jobs of the endpoint are queued (counted: the batch lane's backlog, a look a tick). */
  batchQueued(endpointId: string): number {
    return this.endpoints.get(endpointId)?.batchQueue.ahead(Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER) ?? 0;
  }

  /** How many queued jobs are ahead of the queued job `e`, counting up to `cap` (batch jobs: every interactive one too). */
  ahead(e: Entry, cap: number): number {
    const s = this.ep(e.rec.endpointId);
    if (e.rec.batchId === undefined) return s.queue.ahead(e.queueSeq, cap);
    const first = s.queue.ahead(Number.POSITIVE_INFINITY, cap);
    return e.held ? first : first + s.batchQueue.ahead(e.queueSeq, cap - first);
  }

  /** The entry if the job is running the given attempt. */
  running(id: string, attempt: number): Entry | undefined {
    const e = this.jobs.get(id);
    return e && e.rec.status === 'IN_PROGRESS' && e.rec.attempt === attempt ? e : undefined;
  }

  counts(endpointId: string): EndpointCounts {
    const s = this.endpoints.get(endpointId);
    if (!s) return { completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 };
    return {
      completed: s.completed,
      failed: s.failed,
      inProgress: s.byStatus.IN_PROGRESS,
      inQueue: s.byStatus.IN_QUEUE,
      retried: s.retried,
    };
  }

  queued(endpointId: string): number {
    return this.endpoints.get(endpointId)?.byStatus.IN_QUEUE ?? 0;
  }

  due(now: number, limit: number): DueJobs {
    const collect = (heap: DeadlineHeap, valid: (r: JobRecord, at: number) => boolean): JobRecord[] => {
      const out: JobRecord[] = [];
      const reported: { at: number; id: string }[] = [];
      const seen = new Set<string>();
      while (out.length < limit) {
        const top = heap.peek();
        if (!top || top.at > now) break;
        heap.pop();
        const e = this.jobs.get(top.id);
        if (!e || seen.has(top.id) || !valid(e.rec, top.at)) continue;
        seen.add(top.id);
        reported.push(top);
        out.push(e.rec);
      }
      // Reporting is not handling: keep the entries until the caller's write makes them stale, so a sweep that
      // fails half-way sees the same jobs again (as a durable store would) instead of losing them for good.
      for (const r of reported) heap.push(r.at, r.id);
      return out;
    };
    return {
      expired: collect(this.ttlHeap, (r, at) => r.expiresAt === at),
      timedOut: collect(this.execHeap, (r, at) => r.status === 'IN_PROGRESS' && r.executionDeadline === at),
      // Batch jobs stay while their batch does (batch-types.ts).
      retained: collect(this.retainHeap, (r, at) => isTerminal(r.status) && r.retainUntil === at && !r.batchId),
      leaseExpired: collect(this.leaseHeap, (r, at) => r.status === 'IN_PROGRESS' && r.leaseUntil === at),
    };
  }

  /** The endpoint's jobs that pass `keep`, newest first (ties by id, descending), at most `limit`. */
  newestFirst(endpointId: string, limit: number, keep: (r: JobRecord) => boolean = () => true): JobRecord[] {
    const all: JobRecord[] = [];
    for (const { rec } of this.jobs.values()) if (rec.endpointId === endpointId && keep(rec)) all.push(rec);
    all.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return all.slice(0, Math.max(0, limit));
  }
}
