import { BatchLimitError } from '../batch-types.js';
import type { BatchCounts, BatchJobsQuery, BatchLimits, BatchRecord, BatchStore } from '../batch-types.js';
import type { JobRecord, RetentionPolicy, WebhookDelivery } from '../types.js';
import type { Entry, JobTable } from './job-table.js';

/** What the batches need of the memory store besides its job table. */
export interface MemoryBatchHost {
  readonly t: JobTable;
  /** Removes a job with its deliveries and logs. */
  remove(e: Entry): void;
  /** Call on a record `edit(e, true)` returned: finish time, retention, outbox. */
  terminate(e: Entry, now: number, retention: RetentionPolicy): void;
  enqueueWebhook(d: WebhookDelivery): void;
  /** A batch was deleted: its finished deliveries go. */
  dropDeliveries(id: string): void;
}

interface Batch {
  rec: BatchRecord;
  /** Its jobs' ids in id order (pages), ids mostly arrive in order: insertion is usually at the end. */
  ids: string[];
}

/** Index of the first id in sorted `ids` greater than `id` (`orEqual`: greater or equal). */
function after(ids: string[], id: string, orEqual = false): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = ids[mid]!;
    if (v < id || (!orEqual && v === id)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `BatchStore` of the memory store (batch-types.ts): records copied on write like the job table's. */
export class MemoryBatches implements BatchStore {
  private readonly batches = new Map<string, Batch>();

  constructor(private readonly h: MemoryBatchHost) {}

  private entries(b: Batch): Entry[] {
    const out: Entry[] = [];
    for (const id of b.ids) {
      const e = this.h.t.jobs.get(id);
      if (e) out.push(e);
    }
    return out;
  }

  private edit(b: Batch, patch: Partial<BatchRecord>): BatchRecord {
    b.rec = { ...b.rec, ...patch };
    return b.rec;
  }

  private check(endpointId: string, adding: number, limits: BatchLimits, newBatch: boolean): void {
    let open = 0;
    let queued = 0;
    for (const b of this.batches.values()) {
      if (b.rec.endpointId !== endpointId) continue;
      if (b.rec.finishedAt === undefined) open++;
      if (adding > 0) for (const e of this.entries(b)) if (e.rec.status === 'IN_QUEUE') queued++;
    }
    if (newBatch && open >= limits.maxOpen) throw new BatchLimitError('maxOpen', open);
    if (adding > 0 && queued + adding > limits.maxQueued) throw new BatchLimitError('maxQueued', queued);
  }

  private addJobs(b: Batch, jobs: JobRecord[]): void {
    for (const job of jobs) {
      this.h.t.add({ ...job, batchId: b.rec.id }, true);
      const at = after(b.ids, job.id);
      if (at === b.ids.length) b.ids.push(job.id);
      else b.ids.splice(at, 0, job.id);
    }
  }

  async createBatch(batch: BatchRecord, jobs: JobRecord[], limits: BatchLimits): Promise<void> {
    this.check(batch.endpointId, jobs.length, limits, true);
    const b: Batch = { rec: { ...batch, total: jobs.length }, ids: [] };
    this.batches.set(batch.id, b);
    this.addJobs(b, jobs);
  }

  async getBatch(id: string): Promise<BatchRecord | undefined> {
    return this.batches.get(id)?.rec;
  }

  async listBatches(
    endpointId: string,
    limit: number,
    after?: { createdAt: number; id: string },
  ): Promise<BatchRecord[]> {
    const all = [...this.batches.values()]
      .map((b) => b.rec)
      .filter(
        (r) =>
          r.endpointId === endpointId &&
          (!after || r.createdAt < after.createdAt || (r.createdAt === after.createdAt && r.id < after.id)),
      );
    all.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return all.slice(0, Math.max(0, limit));
  }

  async renameBatch(id: string, name: string | undefined): Promise<BatchRecord | undefined> {
    const b = this.batches.get(id);
    if (!b) return undefined;
    const r = this.edit(b, {});
    if (name === undefined) delete r.name;
    else r.name = name;
    return r;
  }

  async addToBatch(id: string, jobs: JobRecord[], limits: BatchLimits): Promise<BatchRecord | 'not_draft' | undefined> {
    const b = this.batches.get(id);
    if (!b) return undefined;
    if (b.rec.status !== 'DRAFT') return 'not_draft';
    this.check(b.rec.endpointId, jobs.length, limits, false);
    this.addJobs(b, jobs);
    return this.edit(b, { total: b.rec.total + jobs.length });
  }

  async removeFromBatch(id: string, jobId: string): Promise<boolean | 'not_draft'> {
    const b = this.batches.get(id);
    if (!b) return false;
    if (b.rec.status !== 'DRAFT') return 'not_draft';
    const e = this.h.t.jobs.get(jobId);
    if (e?.rec.batchId !== id || !e.held) return false;
    this.h.remove(e);
    const at = after(b.ids, jobId, true);
    if (b.ids[at] === jobId) b.ids.splice(at, 1);
    this.edit(b, { total: b.rec.total - 1 });
    return true;
  }

  async finalizeBatch(id: string, now: number): Promise<BatchRecord | undefined> {
    const b = this.batches.get(id);
    if (b?.rec.status !== 'DRAFT') return undefined;
    return this.edit(b, { status: 'FINALIZED', finalizedAt: now });
  }

  async releaseBatch(id: string, limit: number): Promise<number> {
    const b = this.batches.get(id);
    if (b?.rec.status !== 'FINALIZED') return 0;
    let n = 0;
    for (const e of this.entries(b)) {
      if (n >= limit) break;
      if (!e.held) continue;
      this.h.t.release(e);
      n++;
    }
    return n;
  }

  async cancelBatch(id: string): Promise<BatchRecord | undefined> {
    const b = this.batches.get(id);
    if (!b || b.rec.finishedAt !== undefined || (b.rec.status !== 'DRAFT' && b.rec.status !== 'FINALIZED'))
      return undefined;
    return this.edit(b, { status: 'CANCELLED' });
  }

  async cancelBatchJobs(id: string, now: number, retention: RetentionPolicy, limit: number): Promise<string[]> {
    const b = this.batches.get(id);
    if (!b) return [];
    const out: string[] = [];
    for (const e of this.entries(b)) {
      if (out.length >= limit) break;
      if (e.rec.status !== 'IN_QUEUE') continue;
      this.h.t.edit(e, true);
      this.h.t.setStatus(e, 'CANCELLED');
      this.h.terminate(e, now, retention);
      out.push(e.rec.id);
    }
    return out;
  }

  async batchCounts(id: string): Promise<BatchCounts> {
    const c: BatchCounts = { queued: 0, inProgress: 0, completed: 0, failed: 0, cancelled: 0 };
    const b = this.batches.get(id);
    if (!b) return c;
    for (const { rec } of this.entries(b)) {
      if (rec.status === 'IN_QUEUE') c.queued++;
      else if (rec.status === 'IN_PROGRESS') c.inProgress++;
      else if (rec.status === 'COMPLETED') c.completed++;
      else if (rec.status === 'CANCELLED') c.cancelled++;
      else c.failed++;
    }
    return c;
  }

  async batchJobs(id: string, q: BatchJobsQuery): Promise<JobRecord[]> {
    const b = this.batches.get(id);
    if (!b) return [];
    const out: JobRecord[] = [];
    let skip = q.offset ?? 0;
    for (let i = q.after === undefined ? 0 : after(b.ids, q.after); i < b.ids.length && out.length < q.limit; i++) {
      const e = this.h.t.jobs.get(b.ids[i]!);
      if (e && skip-- <= 0) out.push(e.rec);
    }
    return out;
  }

  async runningBatchJobs(id: string, limit: number): Promise<JobRecord[]> {
    const b = this.batches.get(id);
    if (!b) return [];
    return this.entries(b)
      .filter((e) => e.rec.status === 'IN_PROGRESS')
      .slice(0, limit)
      .map((e) => e.rec);
  }

  async batchLive(id: string): Promise<boolean> {
    const b = this.batches.get(id);
    if (!b) return false;
    for (const id of b.ids) {
      const s = this.h.t.jobs.get(id)?.rec.status;
      if (s === 'IN_QUEUE' || s === 'IN_PROGRESS') return true;
    }
    return false;
  }

  async endBatch(
    id: string,
    now: number,
    status: BatchRecord['status'],
    delivery: WebhookDelivery | undefined,
  ): Promise<BatchRecord | undefined> {
    const b = this.batches.get(id);
    if (!b || b.rec.finishedAt !== undefined) return undefined;
    const r = this.edit(b, { finishedAt: now, status });
    if (delivery) this.h.enqueueWebhook(delivery);
    return r;
  }

  async unendedBatches(limit: number): Promise<BatchRecord[]> {
    const out: BatchRecord[] = [];
    for (const b of this.batches.values()) {
      if (out.length >= limit) break;
      if (b.rec.finishedAt === undefined && (b.rec.status === 'FINALIZED' || b.rec.status === 'CANCELLED'))
        out.push(b.rec);
    }
    return out;
  }

  async endedBatches(before: number, limit: number): Promise<BatchRecord[]> {
    const out: BatchRecord[] = [];
    for (const b of this.batches.values()) {
      if (out.length >= limit) break;
      if (b.rec.finishedAt !== undefined && b.rec.finishedAt <= before) out.push(b.rec);
    }
    return out;
  }

  async deleteBatch(id: string, limit: number): Promise<boolean> {
    const b = this.batches.get(id);
    if (!b) return true;
    const gone = b.ids.splice(0, limit);
    for (const jobId of gone) {
      const e = this.h.t.jobs.get(jobId);
      if (e) this.h.remove(e);
    }
    if (b.ids.length > 0) return false;
    this.batches.delete(id);
    this.h.dropDeliveries(id);
    return true;
  }
}
