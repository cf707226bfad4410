import { isTerminal, type JobStatus } from '@berth/protocol';
import { DeadlineHeap } from './deadline-heap.js';
import { DuplicateJobError } from '../../errors.js';
import type {
  DeleteCondition,
  DueJobs,
  EndpointCounts,
  FinishPatch,
  JobLog,
  JobListQuery,
  JobLogLine,
  JobRecord,
  RecoveryReport,
  RequeueOptions,
  RetentionPolicy,
  Store,
  WebhookAttempt,
  WebhookDelivery,
  StreamSlice,
} from '../types.js';
import { MemoryWebhookOutbox } from './webhook-outbox.js';
import { MemoryJobLogs } from './memory-logs.js';
import { plainJson } from '../../core/raw-json.js';

interface Entry {
  rec: JobRecord;
  /** Stream chunks of the current attempt. */
  chunks: unknown[];
  /** Index of the first chunk not yet delivered to a reader. */
  delivered: number;
  /** Position in its endpoint queue while IN_QUEUE. */
  queueSeq: number;
}

interface EndpointState {
  queue: { id: string; seq: number }[];
  head: number;
  byStatus: Record<JobStatus, number>;
  completed: number;
  failed: number;
  retried: number;
}

/**
 * Records are copied on write, never on read: a write replaces its entry's record with a changed copy (`edit`),
 * so a record handed out (by a read or a write) never changes after, and callers, which never mutate records
 * they get from a store, can keep it as the snapshot it was. `insert` keeps the caller's object as it is.
 */

/** A COMPLETED object output of a priced job gets its `cost` (see `JobRecord.cost`). */
function withCost(output: unknown, cost: number | undefined): unknown {
  if (cost !== undefined) output = plainJson(output); // a result kept as received (`RawJson`) gets its fields
  if (cost === undefined || typeof output !== 'object' || output === null || Array.isArray(output)) return output;
  return { ...output, cost };
}

/**
 * The in-memory store: for tests and throwaway runs (`--store memory`). Nothing survives a restart.
 * Queue order is FIFO per endpoint; deadlines live in min-heaps validated lazily, so a sweep costs
 * O(due jobs x log n), not O(all jobs).
 */
export class MemoryStore implements Store {
  private readonly jobs = new Map<string, Entry>();
  private readonly endpoints = new Map<string, EndpointState>();
  private readonly ttlHeap = new DeadlineHeap();
  private readonly execHeap = new DeadlineHeap();
  private readonly retainHeap = new DeadlineHeap();
  private readonly leaseHeap = new DeadlineHeap();
  private seq = 0;
  private readonly outbox = new MemoryWebhookOutbox((id) => this.jobs.has(id));
  private readonly jobLogs = new MemoryJobLogs();

  private ep(endpointId: string): EndpointState {
    let s = this.endpoints.get(endpointId);
    if (!s) {
      const byStatus = { IN_QUEUE: 0, IN_PROGRESS: 0, COMPLETED: 0, FAILED: 0, CANCELLED: 0, TIMED_OUT: 0 };
      s = { queue: [], head: 0, byStatus, completed: 0, failed: 0, retried: 0 };
      this.endpoints.set(endpointId, s);
    }
    return s;
  }

  /**
   * The entry's record, replaced by a copy that the write then changes (and returns). `ending`: a terminal
   * write, whose copy leaves the running deadlines out (rather than `delete` them after: a deletion turns the
   * object into a slow dictionary-mode one, for every later read and copy).
   */
  private edit(e: Entry, ending = false): JobRecord {
    if (ending) {
      const { executionDeadline: _deadline, leaseUntil: _lease, ...rest } = e.rec;
      e.rec = rest;
    } else e.rec = Object.assign({}, e.rec); // not `{ ...rec }`: adding keys to a spread copy costs ~5 µs (V8)
    return e.rec;
  }

  /** Call on a record `edit` returned. */
  private setStatus(e: Entry, status: JobStatus): void {
    const s = this.ep(e.rec.endpointId);
    s.byStatus[e.rec.status]--;
    s.byStatus[status]++;
    e.rec.status = status;
    if (status === 'COMPLETED') s.completed++;
    if (status === 'FAILED' || status === 'TIMED_OUT') s.failed++;
  }

  private enqueue(e: Entry): void {
    const s = this.ep(e.rec.endpointId);
    e.queueSeq = ++this.seq;
    s.queue.push({ id: e.rec.id, seq: e.queueSeq });
  }

  /** Call on a record `edit(e, true)` returned. */
  private terminate(e: Entry, now: number, retention: RetentionPolicy): void {
    e.rec.finishedAt = now;
    e.rec.retainUntil = now + (e.rec.sync ? retention.sync : retention.async);
    this.retainHeap.push(e.rec.retainUntil, e.rec.id);
    this.outbox.add(e.rec, now); // same (synchronous) step as the terminal state
  }

  async insert(job: JobRecord): Promise<void> {
    if (this.jobs.has(job.id)) throw new DuplicateJobError(job.id);
    const e: Entry = { rec: job, chunks: [], delivered: 0, queueSeq: 0 };
    this.jobs.set(job.id, e);
    const s = this.ep(job.endpointId);
    s.byStatus[job.status]++;
    if (job.status === 'COMPLETED') s.completed++;
    if (job.status === 'FAILED' || job.status === 'TIMED_OUT') s.failed++;
    this.ttlHeap.push(job.expiresAt, job.id);
    if (job.retainUntil !== undefined) this.retainHeap.push(job.retainUntil, job.id);
    if (job.status === 'IN_QUEUE') this.enqueue(e);
    if (isTerminal(job.status)) this.outbox.add(e.rec, job.finishedAt ?? job.createdAt); // stored already terminal
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const e = this.jobs.get(id);
    return e?.rec;
  }

  surelyEmpty(endpointId: string): boolean {
    return (this.endpoints.get(endpointId)?.byStatus.IN_QUEUE ?? 0) === 0;
  }

  async claim(endpointId: string, workerId: string, now: number): Promise<JobRecord | undefined> {
    const s = this.endpoints.get(endpointId);
    if (!s) return undefined;
    while (s.head < s.queue.length) {
      const item = s.queue[s.head]!;
      s.head++;
      const e = this.jobs.get(item.id);
      if (e?.rec.status !== 'IN_QUEUE' || e.queueSeq !== item.seq) continue;
      this.compact(s);
      const r = this.edit(e);
      this.setStatus(e, 'IN_PROGRESS');
      r.attempt++;
      r.workerId = workerId;
      r.startedAt = now;
      r.executionDeadline = now + r.executionTimeout;
      if (r.leaseUntil !== undefined) delete r.leaseUntil;
      if (r.progress !== undefined) delete r.progress;
      e.chunks = [];
      e.delivered = 0;
      this.execHeap.push(r.executionDeadline, r.id);
      return r;
    }
    this.compact(s);
    return undefined;
  }

  private compact(s: EndpointState): void {
    if (s.head > 1024 && s.head * 2 > s.queue.length) {
      s.queue = s.queue.slice(s.head);
      s.head = 0;
    }
  }

  private running(id: string, attempt: number): Entry | undefined {
    const e = this.jobs.get(id);
    return e && e.rec.status === 'IN_PROGRESS' && e.rec.attempt === attempt ? e : undefined;
  }

  async finish(
    id: string,
    attempt: number,
    patch: FinishPatch,
    now: number,
    retention: RetentionPolicy,
  ): Promise<JobRecord | undefined> {
    const e = this.running(id, attempt);
    if (!e) return undefined;
    const r = this.edit(e, true);
    this.setStatus(e, patch.status);
    if (patch.status === 'COMPLETED') r.output = withCost(patch.output, r.cost);
    else r.error = patch.error;
    this.terminate(e, now, retention);
    return r;
  }

  async cancel(
    id: string,
    now: number,
    retention: RetentionPolicy,
  ): Promise<{ before: JobRecord; after: JobRecord } | undefined> {
    const e = this.jobs.get(id);
    if (!e || isTerminal(e.rec.status)) return undefined;
    const before = e.rec;
    const after = this.edit(e, true);
    this.setStatus(e, 'CANCELLED');
    this.terminate(e, now, retention);
    return { before, after };
  }

  async retry(id: string, now: number): Promise<JobRecord | undefined> {
    const e = this.jobs.get(id);
    if (!e || (e.rec.status !== 'FAILED' && e.rec.status !== 'TIMED_OUT')) return undefined;
    const r = this.edit(e);
    this.setStatus(e, 'IN_QUEUE');
    for (const k of ['output', 'error', 'progress', 'workerId', 'startedAt', 'finishedAt', 'retainUntil'] as const)
      delete r[k];
    r.retries++;
    r.queuedAt = now;
    this.ep(r.endpointId).retried++;
    e.chunks = [];
    e.delivered = 0;
    this.enqueue(e);
    return r;
  }

  async requeue(
    id: string,
    { attempt, now, maxAttempts, failError, retention }: RequeueOptions,
  ): Promise<JobRecord | undefined> {
    const e = this.running(id, attempt);
    if (!e) return undefined;
    const r = this.edit(e, attempt >= maxAttempts);
    if (attempt >= maxAttempts) {
      this.setStatus(e, 'FAILED');
      r.error = failError;
      this.terminate(e, now, retention);
      return r;
    }
    this.setStatus(e, 'IN_QUEUE');
    for (const k of ['progress', 'workerId', 'startedAt', 'executionDeadline', 'leaseUntil'] as const) delete r[k];
    r.retries++;
    this.ep(r.endpointId).retried++;
    this.enqueue(e);
    return r;
  }

  async setProgress(id: string, attempt: number, progress: unknown): Promise<boolean> {
    const e = this.running(id, attempt);
    if (!e) return false;
    this.edit(e).progress = progress;
    return true;
  }

  async appendStream(id: string, attempt: number, seq: number, chunks: unknown[]): Promise<number> {
    const e = this.running(id, attempt);
    if (!e) return 0;
    const skip = Math.max(0, e.chunks.length - seq);
    if (seq > e.chunks.length) return 0; // a gap: chunks before these were never seen; refuse out-of-order data
    const fresh = chunks.slice(skip);
    e.chunks.push(...fresh);
    return fresh.length;
  }

  async takeStream(id: string): Promise<unknown[]> {
    const e = this.jobs.get(id);
    if (!e) return [];
    const out = e.chunks.slice(e.delivered);
    e.delivered = e.chunks.length;
    return out;
  }

  async claimStream(id: string, attempt: number, from: number, to: number): Promise<boolean> {
    const e = this.jobs.get(id);
    if (!e || e.rec.attempt !== attempt || e.delivered !== from || e.chunks.length < to) return false;
    e.delivered = to;
    return true;
  }

  async readStream(id: string, from: number): Promise<StreamSlice | undefined> {
    const e = this.jobs.get(id);
    if (!e) return undefined;
    const start = Math.max(from, e.delivered);
    return { attempt: e.rec.attempt, from: start, chunks: e.chunks.slice(start) };
  }

  async setLease(id: string, attempt: number, until: number | null): Promise<boolean> {
    const e = this.running(id, attempt);
    if (!e) return false;
    const r = this.edit(e);
    if (until === null) delete r.leaseUntil;
    else {
      r.leaseUntil = until;
      this.leaseHeap.push(until, id);
    }
    return true;
  }

  async runningOn(workerId: string): Promise<JobRecord[]> {
    const out: JobRecord[] = [];
    for (const e of this.jobs.values())
      if (e.rec.status === 'IN_PROGRESS' && e.rec.workerId === workerId) out.push(e.rec);
    return out;
  }

  async setExpiry(id: string, expiresAt: number): Promise<boolean> {
    const e = this.jobs.get(id);
    if (!e) return false;
    this.edit(e).expiresAt = expiresAt;
    this.ttlHeap.push(expiresAt, id);
    return true;
  }

  async purgeQueue(endpointId: string): Promise<string[]> {
    const s = this.endpoints.get(endpointId);
    if (!s) return [];
    const removed: string[] = [];
    for (let i = s.head; i < s.queue.length; i++) {
      const item = s.queue[i]!;
      const e = this.jobs.get(item.id);
      if (e && e.rec.status === 'IN_QUEUE' && e.queueSeq === item.seq) {
        removed.push(item.id);
        this.remove(e);
      }
    }
    s.queue = [];
    s.head = 0;
    return removed;
  }

  private remove(e: Entry): void {
    this.ep(e.rec.endpointId).byStatus[e.rec.status]--;
    this.jobs.delete(e.rec.id);
    this.outbox.jobDeleted(e.rec.id);
    this.jobLogs.drop(e.rec.id);
  }

  async delete(id: string, cond?: DeleteCondition): Promise<boolean> {
    const e = this.jobs.get(id);
    if (!e) return false;
    if (cond?.expiresAt !== undefined && e.rec.expiresAt !== cond.expiresAt) return false;
    if (cond?.retainUntil !== undefined && e.rec.retainUntil !== cond.retainUntil) return false;
    this.remove(e);
    return true;
  }

  async due(now: number, limit: number): Promise<DueJobs> {
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
      retained: collect(this.retainHeap, (r, at) => isTerminal(r.status) && r.retainUntil === at),
      leaseExpired: collect(this.leaseHeap, (r, at) => r.status === 'IN_PROGRESS' && r.leaseUntil === at),
    };
  }

  async counts(endpointId: string): Promise<EndpointCounts> {
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

  async queueDepth(endpointId: string): Promise<number> {
    return this.endpoints.get(endpointId)?.byStatus.IN_QUEUE ?? 0;
  }

  async queuePosition(id: string, cap: number): Promise<number | undefined> {
    const e = this.jobs.get(id);
    const s = e && this.endpoints.get(e.rec.endpointId);
    if (!e || !s || e.rec.status !== 'IN_QUEUE') return undefined;
    let ahead = 0;
    // The queue is in seq order from `head`; entries of jobs that left it (or were queued again) are skipped.
    for (let i = s.head; i < s.queue.length && ahead < cap; i++) {
      const item = s.queue[i]!;
      if (item.seq >= e.queueSeq) break;
      const other = this.jobs.get(item.id);
      if (other?.rec.status === 'IN_QUEUE' && other.queueSeq === item.seq) ahead++;
    }
    return ahead;
  }

  async recover(leaseUntil: number): Promise<RecoveryReport> {
    const report = { queued: 0, running: 0, endpoints: [] as string[] };
    const endpoints = new Set<string>();
    for (const e of this.jobs.values()) {
      endpoints.add(e.rec.endpointId);
      if (e.rec.status === 'IN_QUEUE') report.queued++;
      if (e.rec.status !== 'IN_PROGRESS') continue;
      report.running++;
      if (e.rec.leaseUntil === undefined || e.rec.leaseUntil < leaseUntil) {
        this.edit(e).leaseUntil = leaseUntil;
        this.leaseHeap.push(leaseUntil, e.rec.id);
      }
    }
    report.endpoints = [...endpoints].sort();
    return report;
  }

  async enqueueWebhook(d: WebhookDelivery): Promise<void> {
    this.outbox.enqueue(d);
  }

  async claimWebhooks(now: number, limit: number, leaseUntil: number): Promise<WebhookDelivery[]> {
    return this.outbox.claim(now, limit, leaseUntil);
  }

  async recordWebhookAttempt(
    deliveryId: string,
    attempt: WebhookAttempt,
    nextAttemptAt: number | null,
  ): Promise<boolean> {
    return this.outbox.record(deliveryId, attempt, nextAttemptAt);
  }

  async webhookDeliveries(jobId: string): Promise<WebhookDelivery[]> {
    return this.outbox.forJob(jobId);
  }

  async appendLogs(id: string, lines: JobLogLine[]): Promise<number> {
    return this.jobs.has(id) ? this.jobLogs.append(id, lines) : 0;
  }

  async logs(id: string): Promise<JobLog | undefined> {
    return this.jobs.has(id) ? this.jobLogs.get(id) : undefined;
  }

  async listJobs(endpointId: string, q: JobListQuery): Promise<JobRecord[]> {
    const { after, statuses } = q;
    const all: JobRecord[] = [];
    for (const { rec } of this.jobs.values()) {
      if (rec.endpointId !== endpointId || (statuses && !statuses.includes(rec.status))) continue;
      if (after && (rec.createdAt > after.createdAt || (rec.createdAt === after.createdAt && rec.id >= after.id)))
        continue;
      all.push(rec);
    }
    all.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return all.slice(0, Math.max(0, q.limit));
  }

  async recent(endpointId: string, limit: number): Promise<JobRecord[]> {
    const all: JobRecord[] = [];
    for (const e of this.jobs.values()) if (e.rec.endpointId === endpointId) all.push(e.rec);
    all.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return all.slice(0, Math.max(0, limit));
  }

  async close(): Promise<void> {}
}
