import { isTerminal } from '@berth/protocol';
import { DuplicateJobError } from '../../errors.js';
import type {
  ClaimLane,
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
import { type Entry, JobTable } from './job-table.js';
import { MemoryWebhookOutbox } from './webhook-outbox.js';
import { MemoryJobLogs } from './memory-logs.js';
import { plainJson } from '../../core/raw-json.js';
import { MemoryBatches } from './memory-batches.js';

/** A COMPLETED object output of a priced job gets its `cost` (see `JobRecord.cost`). */
function withCost(output: unknown, cost: number | undefined): unknown {
  if (cost !== undefined) output = plainJson(output); // a result kept as received (`RawJson`) gets its fields
  if (cost === undefined || typeof output !== 'object' || output === null || Array.isArray(output)) return output;
  return { ...output, cost };
}

/**
 * The in-memory store: for tests and throwaway runs (`--store memory`). Nothing survives a restart.
 * Queue order is FIFO per endpoint. The jobs, their queues, counters and deadline heaps are the `JobTable`
 * (job-table.ts); this class is the Store's operations on it, with the webhook outbox and the job logs.
 */
export class MemoryStore implements Store {
  private readonly t = new JobTable();
  private readonly outbox = new MemoryWebhookOutbox((id) => this.t.jobs.has(id));
  private readonly jobLogs = new MemoryJobLogs();
  readonly batches = new MemoryBatches({
    t: this.t,
    remove: (e) => this.remove(e),
    terminate: (e, now, retention) => this.terminate(e, now, retention),
    enqueueWebhook: (d) => this.outbox.enqueue(d),
    dropDeliveries: (id) => this.outbox.jobDeleted(id),
  });

  /** Call on a record `edit(e, true)` returned. */
  private terminate(e: Entry, now: number, retention: RetentionPolicy): void {
    e.rec.finishedAt = now;
    e.rec.retainUntil = now + (e.rec.sync ? retention.sync : retention.async);
    this.t.retainHeap.push(e.rec.retainUntil, e.rec.id);
    this.outbox.add(e.rec, now); // same (synchronous) step as the terminal state
  }

  private remove(e: Entry): void {
    this.t.remove(e);
    this.outbox.jobDeleted(e.rec.id);
    this.jobLogs.drop(e.rec.id);
  }

  async insert(job: JobRecord): Promise<void> {
    if (this.t.jobs.has(job.id)) throw new DuplicateJobError(job.id);
    const e = this.t.add(job);
    if (isTerminal(job.status)) this.outbox.add(e.rec, job.finishedAt ?? job.createdAt); // stored already terminal
  }

  async get(id: string): Promise<JobRecord | undefined> {
    return this.t.jobs.get(id)?.rec;
  }

  surelyEmpty(endpointId: string): boolean {
    return this.t.queued(endpointId) === 0;
  }

  async claim(endpointId: string, workerId: string, now: number, lane?: ClaimLane): Promise<JobRecord | undefined> {
    const e = this.t.dequeue(endpointId, lane);
    if (!e) return undefined;
    const r = this.t.edit(e);
    this.t.setStatus(e, 'IN_PROGRESS');
    r.attempt++;
    r.workerId = workerId;
    r.startedAt = now;
    r.executionDeadline = now + r.executionTimeout;
    if (r.leaseUntil !== undefined) delete r.leaseUntil;
    if (r.progress !== undefined) delete r.progress;
    e.chunks = [];
    e.delivered = 0;
    this.t.execHeap.push(r.executionDeadline, r.id);
    return r;
  }

  async finish(
    id: string,
    attempt: number,
    patch: FinishPatch,
    now: number,
    retention: RetentionPolicy,
  ): Promise<JobRecord | undefined> {
    const e = this.t.running(id, attempt);
    if (!e) return undefined;
    const r = this.t.edit(e, true);
    this.t.setStatus(e, patch.status);
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
    const e = this.t.jobs.get(id);
    if (!e || isTerminal(e.rec.status) || e.held) return undefined;
    const before = e.rec;
    const after = this.t.edit(e, true);
    this.t.setStatus(e, 'CANCELLED');
    this.terminate(e, now, retention);
    return { before, after };
  }

  async retry(id: string, now: number): Promise<JobRecord | undefined> {
    const e = this.t.jobs.get(id);
    if (!e || (e.rec.status !== 'FAILED' && e.rec.status !== 'TIMED_OUT')) return undefined;
    const r = this.t.edit(e);
    this.t.setStatus(e, 'IN_QUEUE');
    for (const k of ['output', 'error', 'progress', 'workerId', 'startedAt', 'finishedAt', 'retainUntil'] as const)
      delete r[k];
    r.retries++;
    r.queuedAt = now;
    this.t.countRetry(e);
    e.chunks = [];
    e.delivered = 0;
    this.t.enqueue(e);
    return r;
  }

  async requeue(
    id: string,
    { attempt, now, maxAttempts, failError, retention }: RequeueOptions,
  ): Promise<JobRecord | undefined> {
    const e = this.t.running(id, attempt);
    if (!e) return undefined;
    const r = this.t.edit(e, attempt >= maxAttempts);
    if (attempt >= maxAttempts) {
      this.t.setStatus(e, 'FAILED');
      r.error = failError;
      this.terminate(e, now, retention);
      return r;
    }
    this.t.setStatus(e, 'IN_QUEUE');
    for (const k of ['progress', 'workerId', 'startedAt', 'executionDeadline', 'leaseUntil'] as const) delete r[k];
    r.retries++;
    this.t.countRetry(e);
    this.t.enqueue(e);
    return r;
  }

  async setProgress(id: string, attempt: number, progress: unknown): Promise<boolean> {
    const e = this.t.running(id, attempt);
    if (!e) return false;
    this.t.edit(e).progress = progress;
    return true;
  }

  async appendStream(id: string, attempt: number, seq: number, chunks: unknown[]): Promise<number> {
    const e = this.t.running(id, attempt);
    if (!e) return 0;
    const skip = Math.max(0, e.chunks.length - seq);
    if (seq > e.chunks.length) return 0; // a gap: chunks before these were never seen; refuse out-of-order data
    const fresh = chunks.slice(skip);
    e.chunks.push(...fresh);
    return fresh.length;
  }

  async takeStream(id: string): Promise<unknown[]> {
    const e = this.t.jobs.get(id);
    if (!e) return [];
    const out = e.chunks.slice(e.delivered);
    e.delivered = e.chunks.length;
    return out;
  }

  async claimStream(id: string, attempt: number, from: number, to: number): Promise<boolean> {
    const e = this.t.jobs.get(id);
    if (!e || e.rec.attempt !== attempt || e.delivered !== from || e.chunks.length < to) return false;
    e.delivered = to;
    return true;
  }

  async readStream(id: string, from: number): Promise<StreamSlice | undefined> {
    const e = this.t.jobs.get(id);
    if (!e) return undefined;
    const start = Math.max(from, e.delivered);
    return { attempt: e.rec.attempt, from: start, chunks: e.chunks.slice(start) };
  }

  async setLease(id: string, attempt: number, until: number | null): Promise<boolean> {
    const e = this.t.running(id, attempt);
    if (!e) return false;
    const r = this.t.edit(e);
    if (until === null) delete r.leaseUntil;
    else {
      r.leaseUntil = until;
      this.t.leaseHeap.push(until, id);
    }
    return true;
  }

  async runningOn(workerId: string): Promise<JobRecord[]> {
    const out: JobRecord[] = [];
    for (const e of this.t.jobs.values())
      if (e.rec.status === 'IN_PROGRESS' && e.rec.workerId === workerId) out.push(e.rec);
    return out;
  }

  async setExpiry(id: string, expiresAt: number): Promise<boolean> {
    const e = this.t.jobs.get(id);
    if (!e) return false;
    this.t.edit(e).expiresAt = expiresAt;
    this.t.ttlHeap.push(expiresAt, id);
    return true;
  }

  async purgeQueue(endpointId: string): Promise<string[]> {
    const removed = this.t.drain(endpointId);
    for (const e of removed) this.remove(e);
    return removed.map((e) => e.rec.id);
  }

  async delete(id: string, cond?: DeleteCondition): Promise<boolean> {
    const e = this.t.jobs.get(id);
    if (!e) return false;
    if (cond?.expiresAt !== undefined && e.rec.expiresAt !== cond.expiresAt) return false;
    if (cond?.retainUntil !== undefined && e.rec.retainUntil !== cond.retainUntil) return false;
    this.remove(e);
    return true;
  }

  async due(now: number, limit: number): Promise<DueJobs> {
    return this.t.due(now, limit);
  }

  async counts(endpointId: string): Promise<EndpointCounts> {
    return this.t.counts(endpointId);
  }

  async batchBacklog(endpointId: string): Promise<number> {
    return this.t.batchQueued(endpointId);
  }

  async queueDepth(endpointId: string): Promise<number> {
    return this.t.queued(endpointId);
  }

  async queuePosition(id: string, cap: number): Promise<number | undefined> {
    const e = this.t.jobs.get(id);
    return e?.rec.status === 'IN_QUEUE' ? this.t.ahead(e, cap) : undefined;
  }

  async recover(leaseUntil: number): Promise<RecoveryReport> {
    const report = { queued: 0, running: 0, endpoints: [] as string[] };
    const endpoints = new Set<string>();
    for (const e of this.t.jobs.values()) {
      endpoints.add(e.rec.endpointId);
      if (e.rec.status === 'IN_QUEUE') report.queued++;
      if (e.rec.status !== 'IN_PROGRESS') continue;
      report.running++;
      if (e.rec.leaseUntil === undefined || e.rec.leaseUntil < leaseUntil) {
        this.t.edit(e).leaseUntil = leaseUntil;
        this.t.leaseHeap.push(leaseUntil, e.rec.id);
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
    return this.t.jobs.has(id) ? this.jobLogs.append(id, lines) : 0;
  }

  async logs(id: string): Promise<JobLog | undefined> {
    return this.t.jobs.has(id) ? this.jobLogs.get(id) : undefined;
  }

  async listJobs(endpointId: string, q: JobListQuery): Promise<JobRecord[]> {
    const { after, statuses } = q;
    return this.t.newestFirst(
      endpointId,
      q.limit,
      (rec) =>
        (!statuses || statuses.includes(rec.status)) &&
        (!after || rec.createdAt < after.createdAt || (rec.createdAt === after.createdAt && rec.id < after.id)),
    );
  }

  async recent(endpointId: string, limit: number): Promise<JobRecord[]> {
    return this.t.newestFirst(endpointId, limit);
  }

  async close(): Promise<void> {}
}
