import { BerthError, LIMITS, type BatchSummary, type JobRequest } from '@berth/protocol';
import { randomUUID } from 'node:crypto';
import type { CoreContext } from '../jobs/context.js';
import type { Dispatcher } from '../jobs/dispatcher.js';
import type { JobService } from '../jobs/job-service.js';
import { newJob } from '../jobs/new-job.js';
import { BatchLimitError, type BatchLimits, type BatchRecord, type BatchStore } from '../store/batch-types.js';
import type { JobRecord, WebhookDelivery } from '../store/types.js';
import type { BatchBody } from './batch-body.js';
import { toBatchSummary } from './batch-view.js';

/** Jobs a release, a cancel or a delete writes per store call: a batch of 100,000 is never written whole. */
const CHUNK = 1000;
/** How long after a batch job ended its batch is checked for its end (one check for a burst of results). */
const CHECK_DELAY_MS = 25;
/** How often unended batches are checked anyway (another replica's results, ttl deletions, a restart). */
const SWEEP_MS = 2000;

/** `batch_<time-ordered uuid>`: newer batches sort after older ones. */
function newBatchId(): string {
  const t = Date.now().toString(16).padStart(12, '0');
  return `batch_${t.slice(0, 8)}-${t.slice(8)}${randomUUID().slice(13)}`;
}

/** What the batch service needs besides the job machinery's context. */
export interface BatchServiceDeps {
  ctx: CoreContext;
  jobs: JobService;
  dispatcher: Dispatcher;
  /** Delivers due webhooks now (the terminal notification was just stored). */
  kickWebhooks: () => void;
}

/**
 * Batch Jobs (docs/api.md#batch-jobs): a named batch of `/run` requests on one endpoint, held while DRAFT, queued
 * behind every interactive job once FINALIZED, cancelled as a whole. Its end (every request ended, or a cancel
 * that stopped them) is found after each of its jobs ends and by a periodic sweep, and stored once with its
 * webhook, so replicas sharing a store notify once.
 */
export class BatchService {
  private readonly soon = new Map<string, NodeJS.Timeout>();
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;

  constructor(private readonly d: BatchServiceDeps) {
    d.ctx.onTerminal.push((job) => {
      if (job.batchId !== undefined) this.checkSoon(job.batchId);
    });
  }

  private get store(): BatchStore {
    const b = this.d.ctx.store.batches;
    if (!b) throw new BerthError('route_not_found', 'this store keeps no batches');
    return b;
  }

  /** Requests one create or add call may carry. */
  get maxPerCall(): number {
    return this.d.ctx.options.batches.maxPerCall;
  }

  private get limits(): BatchLimits {
    return this.d.ctx.options.batches;
  }

  private now(): number {
    return this.d.ctx.clock.now();
  }

  /** The batch, or 404 `batch_not_found` (unknown, or another endpoint's). */
  async batch(endpointId: string, id: string): Promise<BatchRecord> {
    const b = await this.store.getBatch(id);
    if (!b || b.endpointId !== endpointId)
      throw new BerthError('batch_not_found', `batch ${id} not found on endpoint ${endpointId}`);
    return b;
  }

  async summary(b: BatchRecord): Promise<BatchSummary> {
    return toBatchSummary(b, await this.store.batchCounts(b.id));
  }

  /** Jobs for requests: `/run` defaults, except a ttl of 7 days (batches are for work that can wait). */
  private jobsFor(endpointId: string, requests: JobRequest[]): JobRecord[] {
    const now = this.now();
    return requests.map((req) => {
      const policy = { ...req.policy, ttl: req.policy?.ttl ?? LIMITS.ttlMax };
      return newJob(endpointId, { ...req, policy }, false, now);
    });
  }

  private refused(err: unknown): never {
    if (err instanceof BatchLimitError) {
      if (err.limit === 'maxQueued')
        throw new BerthError(
          'batch_queue_full',
          `the endpoint has ${err.value} batch requests queued; at most ${this.limits.maxQueued}`,
          { limit: this.limits.maxQueued },
        );
      throw new BerthError(
        'batch_limit_reached',
        `the endpoint has ${err.value} open batches; at most ${this.limits.maxOpen} (finalize and finish or cancel one)`,
        { limit: this.limits.maxOpen },
      );
    }
    throw err;
  }

  async create(endpointId: string, body: BatchBody): Promise<BatchSummary & { requestIds: string[] }> {
    const rec: BatchRecord = { id: newBatchId(), endpointId, status: 'DRAFT', createdAt: this.now(), total: 0 };
    if (body.name !== undefined) rec.name = body.name;
    if (body.webhook !== undefined) rec.webhook = body.webhook;
    const jobs = this.jobsFor(endpointId, body.requests);
    await this.store.createBatch(rec, jobs, this.limits).catch((err) => this.refused(err));
    for (const j of jobs) this.d.ctx.wakeAt(j.expiresAt);
    this.d.ctx.logger.info('batch created', { batchId: rec.id, endpointId, requests: jobs.length });
    const b = await this.batch(endpointId, rec.id);
    return { ...(await this.summary(b)), requestIds: jobs.map((j) => j.id) };
  }

  async add(endpointId: string, id: string, requests: JobRequest[]): Promise<BatchSummary & { requestIds: string[] }> {
    await this.batch(endpointId, id);
    const jobs = this.jobsFor(endpointId, requests);
    const r = await this.store.addToBatch(id, jobs, this.limits).catch((err) => this.refused(err));
    if (r === undefined) throw new BerthError('batch_not_found', `batch ${id} not found on endpoint ${endpointId}`);
    if (r === 'not_draft') throw notDraft(id, 'requests can be added');
    for (const j of jobs) this.d.ctx.wakeAt(j.expiresAt);
    return { ...(await this.summary(r)), requestIds: jobs.map((j) => j.id) };
  }

  async remove(endpointId: string, id: string, requestId: string): Promise<BatchSummary> {
    await this.batch(endpointId, id);
    const r = await this.store.removeFromBatch(id, requestId);
    if (r === 'not_draft') throw notDraft(id, 'requests can be removed');
    if (!r) throw new BerthError('job_not_found', `request ${requestId} is not in batch ${id}`);
    this.d.ctx.events.emit(requestId, 'deleted');
    return this.summary(await this.batch(endpointId, id));
  }

  async rename(endpointId: string, id: string, name: string | undefined): Promise<BatchSummary> {
    await this.batch(endpointId, id);
    const r = await this.store.renameBatch(id, name);
    if (!r) throw new BerthError('batch_not_found', `batch ${id} not found on endpoint ${endpointId}`);
    return this.summary(r);
  }

  /** DRAFT -> FINALIZED, then its requests are queued (a chunk at a time); FINALIZED already: answered as it is. */
  async finalize(endpointId: string, id: string): Promise<BatchSummary> {
    const before = await this.batch(endpointId, id);
    const b = await this.store.finalizeBatch(id, this.now());
    if (!b && before.status !== 'FINALIZED') throw notDraft(id, 'it can be finalized');
    await this.release(b ?? before);
    await this.check(id);
    this.d.ctx.logger.info('batch finalized', { batchId: id, endpointId, requests: before.total });
    return this.summary(await this.batch(endpointId, id));
  }

  private async release(b: BatchRecord): Promise<void> {
    while ((await this.store.releaseBatch(b.id, CHUNK)) > 0) this.d.dispatcher.pump(b.endpointId);
  }

  /**
   * Cancels the batch: its queued requests at once, its running ones through `/cancel` (their workers get the
   * stop). An ended batch is answered as it is.
   */
  async cancel(endpointId: string, id: string): Promise<BatchSummary> {
    const before = await this.batch(endpointId, id);
    const b = await this.store.cancelBatch(id);
    if (b) this.d.ctx.logger.info('batch cancelled', { batchId: id, endpointId, was: before.status });
    if (b || (before.status === 'CANCELLED' && before.finishedAt === undefined)) {
      await this.stopAll(b ?? before);
      await this.check(id);
    }
    return this.summary(await this.batch(endpointId, id));
  }

  private async stopAll(b: BatchRecord): Promise<void> {
    const { ctx, jobs } = this.d;
    for (;;) {
      const ids = await this.store.cancelBatchJobs(b.id, this.now(), ctx.options.retention, CHUNK);
      for (const jobId of ids) ctx.events.emit(jobId, 'change');
      if (ids.length < CHUNK) break;
    }
    // Running requests: each cancelled like a /cancel (the worker's handler gets its AbortSignal).
    for (let round = 0; round < 100; round++) {
      const running = await this.store.runningBatchJobs(b.id, CHUNK);
      if (running.length === 0) break;
      for (const job of running) await jobs.cancel(b.endpointId, job.id).catch(() => {});
    }
  }

  async list(
    endpointId: string,
    limit: number,
    after?: { createdAt: number; id: string },
  ): Promise<{ batches: BatchSummary[]; more: BatchRecord | undefined }> {
    const rows = await this.store.listBatches(endpointId, limit + 1, after);
    const page = rows.slice(0, limit);
    const batches = await Promise.all(page.map((b) => this.summary(b)));
    return { batches, more: rows.length > limit ? page.at(-1) : undefined };
  }

  /** A page of the batch's requests in id order after `after` (or from `offset`), one more than asked: is there more. */
  async requests(endpointId: string, id: string, limit: number, after?: string, offset?: number) {
    const b = await this.batch(endpointId, id);
    const rows = await this.store.batchJobs(id, {
      limit: limit + 1,
      ...(after !== undefined ? { after } : {}),
      ...(offset ? { offset } : {}),
    });
    return { batch: b, page: rows.slice(0, limit), more: rows.length > limit };
  }

  /** Checks the batch's end `CHECK_DELAY_MS` from now (once, however many of its jobs end meanwhile). */
  private checkSoon(id: string): void {
    if (this.soon.has(id)) return;
    const t = setTimeout(() => {
      this.soon.delete(id);
      this.check(id).catch((err) => this.d.ctx.logger.error('batch check failed', { batchId: id, err }));
    }, CHECK_DELAY_MS);
    t.unref();
    this.soon.set(id, t);
  }

  /**
   * Ends the batch when nothing of it is queued or running: FINALIZED stays FINALIZED (FAILED when requests were
   * lost to their ttl), CANCELLED stays CANCELLED; the terminal webhook is stored in the same write. A FINALIZED
   * batch still holding requests (a release cut short by a restart) is released first; a CANCELLED one still
   * holding queued or running requests is stopped again.
   */
  async check(id: string): Promise<void> {
    const b = await this.store.getBatch(id);
    if (!b || b.finishedAt !== undefined || b.status === 'DRAFT') return;
    if (b.status === 'FINALIZED') await this.release(b);
    if (await this.store.batchLive(id)) {
      if (b.status === 'CANCELLED') await this.stopAll(b);
      if (await this.store.batchLive(id)) return;
    }
    const now = this.now();
    const summary = await this.summary(b);
    const status = b.status === 'FINALIZED' && summary.requestExpired > 0 ? 'FAILED' : b.status;
    const final: BatchSummary = { ...summary, status, done: true, finishedAt: now };
    const ended = await this.store.endBatch(id, now, status, b.webhook ? delivery(b, final, now) : undefined);
    if (!ended) return;
    this.d.ctx.logger.info('batch ended', {
      batchId: id,
      endpointId: b.endpointId,
      status,
      total: summary.requestTotal,
    });
    if (b.webhook) this.d.kickWebhooks();
  }

  /** Checks every unended batch (of every endpoint), and deletes batches ended longer than their retention ago. */
  async sweep(): Promise<void> {
    if (this.sweeping || !this.d.ctx.store.batches) return;
    this.sweeping = true;
    try {
      for (const b of await this.store.unendedBatches(100)) await this.check(b.id);
      const before = this.now() - this.d.ctx.options.batches.retentionMs;
      for (const b of await this.store.endedBatches(before, 10)) {
        // Its requests go with it, a chunk a write.
        while (!(await this.store.deleteBatch(b.id, CHUNK)));
        this.d.ctx.logger.info('batch deleted after its retention', { batchId: b.id, endpointId: b.endpointId });
      }
    } finally {
      this.sweeping = false;
    }
  }

  /** Starts the periodic sweep (the server does, unless its sweep timer is off). */
  start(): void {
    this.timer = setInterval(() => {
      this.sweep().catch((err) => this.d.ctx.logger.error('batch sweep failed', { err }));
    }, SWEEP_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    for (const t of this.soon.values()) clearTimeout(t);
    this.soon.clear();
  }
}

const notDraft = (id: string, what: string) =>
  new BerthError('batch_not_draft', `batch ${id} is not a DRAFT: only while it is one ${what}`);

/** The terminal notification: the batch summary plus `event`, signed and retried like a job's webhook. */
function delivery(b: BatchRecord, s: BatchSummary, now: number): WebhookDelivery {
  return {
    id: `msg_${b.id}_batch`,
    jobId: b.id,
    endpointId: b.endpointId,
    url: b.webhook!,
    body: JSON.stringify({ ...s, event: 'batch.ended', webhook: b.webhook }),
    createdAt: now,
    nextAttemptAt: now,
    attempts: [],
  };
}
