import { BerthError, isTerminal, type HealthReply, type JobObject, type JobRequest } from '@berth/protocol';
import type { JobRecord, StreamSlice } from '../store/types.js';
import type { CoreContext } from './context.js';
import { finishedJob } from './terminal.js';
import type { Dispatcher } from './dispatcher.js';
import { newJob } from './new-job.js';
import { DuplicateJobError } from '../errors.js';
import { idempotentJobId, sameRequestOrRefuse, type IdempotencyScope } from './idempotency.js';
import { armWaiter, type Waiter } from './job-events.js';
import type { AbortLike } from '../core/abort.js';
import { claimPushed } from './stream-claim.js';
import { toJobObject } from '../store/job-view.js';
import { withQueueInfo } from './queue-info.js';
import type { Context } from '@opentelemetry/api';
import type { JobTracer } from './job-tracer.js';

/** How a job is submitted. */
export interface SubmitOptions {
  /** `/runsync` (the caller waits for the result; shorter retention) rather than `/run`. */
  sync: boolean;
  /** The job's price (see `JobRecord.cost`). */
  cost?: number | undefined;
  /** An `Idempotency-Key` with its scope: the job's id is derived from it. */
  idem?: IdempotencyScope | undefined;
  /** With tracing on: the context of the request's span, the parent of the job's spans. */
  trace?: Context | undefined;
}

/** The client-facing job operations. Each is a conditional store write followed by wake-ups. */
export class JobService {
  constructor(
    private readonly ctx: CoreContext,
    private readonly dispatcher: Dispatcher,
  ) {}

  /**
   * Stores a new job (resolves once it is committed), then dispatches it. With `idem` (an `Idempotency-Key`),
   * the job's id is the key's: a retry answers the job the first submit stored (on
   * any replica), `replayed` true; a different body is refused with 409 `idempotency_key_reused`.
   */
  async submit(
    endpointId: string,
    req: JobRequest,
    { sync, cost, idem, trace }: SubmitOptions,
  ): Promise<JobRecord & { replayed?: true }> {
    const now = this.ctx.clock.now();
    const job = newJob(endpointId, req, sync, now);
    if (cost !== undefined) job.cost = cost;
    if (idem) job.id = idempotentJobId(idem, endpointId, sync);
    await this.ctx.blobs.bind(job); // a streamed input gets its job's name before the row refers to it
    for (let tries = 0; ; tries++) {
      try {
        this.ctx.tracer?.queued(job, trace); // before the insert: its claim may join the insert's store batch
        await this.insert(job);
        return job;
      } catch (err) {
        this.ctx.tracer?.abandon(job.id);
        if (!idem || !(err instanceof DuplicateJobError)) {
          await this.ctx.blobs.unbind(job); // not stored: its input file goes now, not at the next sweep
          throw err;
        }
        const stored = await this.ctx.store.get(job.id);
        if (stored) {
          this.ctx.logger.debug('idempotent retry answered with the stored job', { jobId: job.id, endpointId });
          try {
            return { ...sameRequestOrRefuse(stored, job, idem.key), replayed: true };
          } finally {
            await this.ctx.blobs.unbind(job); // the stored job has its own input file
          }
        }
        if (tries >= 2) {
          await this.ctx.blobs.unbind(job);
          throw err; // deleted between the insert and the read, again and again
        }
      }
    }
  }

  private async insert(job: JobRecord): Promise<void> {
    const { endpointId } = job;
    const inserted = this.ctx.store.insert(job);
    // Dispatch at once: with a batching store (SQLite) the claim joins the insert's batch, one commit for both
    // (the worker hears of the job only after it). The pump below covers stores that see the job only later.
    this.dispatcher.pump(endpointId);
    await inserted;
    this.ctx.wakeAt(job.expiresAt);
    this.ctx.logger.debug('job accepted', { jobId: job.id, endpointId, sync: job.sync });
    this.dispatcher.pump(endpointId);
  }

  /** Job spans, with tracing on. */
  get tracer(): JobTracer | undefined {
    return this.ctx.tracer;
  }

  /** Wake-ups for waiters on a job. */
  get events() {
    return this.ctx.events;
  }

  /** Stream chunks no reader has had yet (consumed by this call). */
  takeStream(id: string): Promise<unknown[]> {
    return this.ctx.store.takeStream(id);
  }

  /** Stream chunks by position, nothing taken (resumable SSE readers). */
  readStream(id: string, from: number): Promise<StreamSlice | undefined> {
    return this.ctx.store.readStream(id, from);
  }

  /** After a wake-up: the chunks the events carried (see `claimPushed`), or undefined: read the store. */
  pushedChunks(id: string, waiter: Waiter): Promise<unknown[] | undefined> {
    return claimPushed(this.ctx.store, id, waiter);
  }

  /** The job object of `/status`: with `queuePosition` and `waitingFor` while IN_QUEUE (`queue-info.ts`). */
  statusObject(job: JobRecord): Promise<JobObject> {
    return withQueueInfo(this.ctx, job);
  }

  /**
   * The job, or 404 `job_not_found` (unknown, other endpoint, expired by ttl or past retention). `input: false`: a
   * reader that does not need the input (a wait, a status answer) lets the store leave a big one unread.
   */
  async get(endpointId: string, id: string, options?: { input?: boolean }): Promise<JobRecord> {
    const job = await this.ctx.store.get(id, options);
    if (!job || job.endpointId !== endpointId)
      throw new BerthError(
        'job_not_found',
        `job ${id} not found on endpoint ${endpointId} (unknown, expired by ttl, or past retention)`,
      );
    return job;
  }

  /** `?ttl=`: the job's remaining lifespan becomes `ttlMs` from now. */
  async setTtl(endpointId: string, id: string, ttlMs: number): Promise<void> {
    await this.get(endpointId, id, LEAN);
    const at = this.ctx.clock.now() + ttlMs;
    if (await this.ctx.store.setExpiry(id, at)) this.ctx.wakeAt(at);
  }

  /**
   * Waits until the job is terminal or `waitMs` elapses (or the client goes away), then answers its job object.
   * A job deleted meanwhile (ttl) answers 404.
   */
  async waitTerminal(
    endpointId: string,
    id: string,
    waitMs: number,
    signal?: AbortLike,
    known?: JobRecord,
  ): Promise<JobObject> {
    const waiter = armWaiter(this.ctx.events, id);
    try {
      const deadline = performance.now() + waitMs;
      // `known`: the record as just stored (a fresh submit); later, the record a local change event carried.
      for (let job = known; ; job = waiter.takeJob()) {
        job ??= await this.get(endpointId, id, LEAN);
        const left = deadline - performance.now();
        if (isTerminal(job.status)) return toJobObject(job);
        if (left <= 0) return toJobObject(await this.durable(job));
        const ev = await waiter.wait(left, signal);
        if (ev === 'aborted') return toJobObject(job);
      }
    } finally {
      waiter.dispose();
    }
  }

  /**
   * Before answering a job that is not terminal: a /runsync insert may have committed asynchronously
   * (`Store.flush`), so make it durable, then answer what the store holds (404 if it is gone).
   */
  private async durable(job: JobRecord): Promise<JobRecord> {
    if (!job.sync || !this.ctx.store.flush) return job;
    await this.ctx.store.flush();
    return this.get(job.endpointId, job.id, LEAN);
  }

  /** Cancels a queued or running job; a terminal job is answered unchanged. */
  async cancel(endpointId: string, id: string): Promise<JobObject> {
    await this.get(endpointId, id, LEAN);
    const { store, clock, options, logger } = this.ctx;
    const res = await store.cancel(id, clock.now(), options.retention);
    if (!res) return toJobObject(await this.get(endpointId, id, LEAN));
    if (res.before.status === 'IN_PROGRESS') this.dispatcher.stop(res.before, 'cancelled');
    logger.info('job cancelled', {
      jobId: id,
      endpointId,
      workerId: res.before.workerId,
      attempt: res.before.attempt,
      was: res.before.status,
    });
    finishedJob(this.ctx, res.after);
    return toJobObject(res.after);
  }

  /** FAILED or TIMED_OUT -> IN_QUEUE (same id and input); otherwise 409 `job_not_retryable`. */
  async retry(endpointId: string, id: string): Promise<JobRecord> {
    const job = await this.get(endpointId, id);
    const after = await this.ctx.store.retry(id, this.ctx.clock.now());
    if (!after)
      throw new BerthError(
        'job_not_retryable',
        `job ${id} is ${job.status}; only FAILED or TIMED_OUT jobs can be retried`,
      );
    this.ctx.events.emit(id, 'change');
    this.dispatcher.pump(endpointId);
    return after;
  }

  /** Removes the endpoint's queued jobs; running jobs are untouched. */
  async purge(endpointId: string): Promise<number> {
    const ids = await this.ctx.store.purgeQueue(endpointId);
    for (const id of ids) this.ctx.events.emit(id, 'deleted');
    if (ids.length) this.ctx.logger.info('queue purged', { endpointId, removed: ids.length });
    return ids.length;
  }

  async health(endpointId: string): Promise<HealthReply> {
    const jobs = await this.ctx.store.counts(endpointId);
    const workers = this.ctx.registry.health(endpointId, performance.now(), this.ctx.options.heartbeatMs);
    const batch = this.ctx.batches.health(endpointId, this.ctx.registry.batchMaxSize(endpointId));
    const reply: HealthReply = batch ? { jobs, workers, batch } : { jobs, workers };
    const gpus = this.ctx.registry.gpusOf(endpointId);
    if (gpus) reply.gpus = gpus;
    if (jobs.inQueue > 0)
      reply.waitingFor = this.ctx.registry.waitingFor(
        endpointId,
        false,
        performance.now(),
        this.ctx.options.heartbeatMs,
      );
    return reply;
  }
}

/** `JobService.get` for a reader that needs no input: a big one stays in the store. */
export const LEAN = { input: false } as const;
