import type { CancelMessage, ServerMessage } from '@berth/protocol';
import type { ClaimLane, JobRecord } from '../store/types.js';
import type { WorkerSession } from '../workers/worker-session.js';
import type { CoreContext } from './context.js';
import { finishedJob } from './terminal.js';
import { SERVER_LIMITS } from '../defaults.js';
import { StoreUnavailableError } from '../errors.js';

const WORKER_LOST = 'worker lost: the job was requeued too many times after its worker disconnected';

/**
 * Moves jobs from the store to workers: claims queued jobs for workers with free credits (credit-based flow
 * control), requeues attempts whose worker was lost, and tells workers to stop jobs that were cancelled, timed
 * out or expired. What workers report back is applied by `WorkerReports` (worker-reports.ts).
 */
export class Dispatcher {
  private readonly pumping = new Set<string>();
  private readonly again = new Set<string>();
  /** Per endpoint, the size of the next pass when the last one stopped for want of credits, not of jobs. */
  private readonly nextBatch = new Map<string, number>();

  constructor(private readonly ctx: CoreContext) {}

  /**
   * Dispatches queued jobs of an endpoint while some worker has a free credit. Safe to call often. The pass starts
   * in a microtask: every pump of the same synchronous run (the results of one socket read, each freeing a
   * credit) is served by one pass, in the same store batch, instead of a pass of one claim and a wait for it.
   */
  pump(endpointId: string): void {
    if (this.ctx.store.surelyEmpty?.(endpointId)) return; // a later insert, requeue or retry pumps again
    if (this.pumping.has(endpointId)) {
      this.again.add(endpointId);
      return;
    }
    this.pumping.add(endpointId);
    queueMicrotask(
      () =>
        void this.drainLanes(endpointId)
          .catch((err) => this.ctx.logger.error('dispatch failed', { endpointId, err }))
          .finally(() => {
            this.pumping.delete(endpointId);
            if (this.again.delete(endpointId)) this.pump(endpointId);
          }),
    );
  }

  /**
   * An endpoint with a batch lane (issue #38) is drained lane by lane: its other workers claim jobs of no batch,
   * then its lane workers released batch jobs; each lane's empty claim ends that lane's pass only.
   */
  private async drainLanes(endpointId: string): Promise<void> {
    if (!this.ctx.registry.hasBatchLane(endpointId)) return this.drainQueue(endpointId, undefined);
    await this.drainQueue(endpointId, 'interactive');
    await this.drainQueue(endpointId, 'batch');
  }

  /**
   * Claims in passes whose claims share one store batch (one COMMIT for SQLite) instead of taking one commit,
   * and one event-loop turn, each. A pass claims twice as many as the last one did (1, 2, 4 ... up to
   * `SERVER_LIMITS.claimBatch`, never past the free credits) while every claim finds a job: a deep queue drains in large
   * batches, a shallow one costs about one empty claim per pump. Stops when a claim finds the queue empty, or
   * before claiming when the store's counts say it is (`Store.surelyEmpty`: then no claim comes back empty).
   * Stopped by full credits instead, with jobs left, the next pump starts where it left off: a deep queue drained by
   * a busy worker is not claimed 1, 2, 4 ... again after every round of results (each pass waits for a commit).
   * A worker with a batch handler (`hello.batch`) gets its claims in groups of up to its `batch.maxSize`.
   */
  private async drainQueue(endpointId: string, lane: ClaimLane | undefined): Promise<void> {
    const { store, registry } = this.ctx;
    const key = lane === undefined ? endpointId : `${lane}\t${endpointId}`;
    let batch = this.nextBatch.get(key) ?? 1;
    this.nextBatch.delete(key);
    for (; ; batch = Math.min(batch * 2, SERVER_LIMITS.claimBatch)) {
      const claims: Promise<boolean>[] = [];
      while (claims.length < batch && !store.surelyEmpty?.(endpointId)) {
        const session = registry.pick(endpointId, lane);
        if (!session) break;
        // A batch handler gets a batch's worth in a row (one write: its batch fills in one round trip), when the
        // store counts its queue (no claim then comes back empty); else one claim per pick, as for any worker.
        let group = session.batchMaxSize && store.surelyEmpty ? Math.min(session.capacity, session.batchMaxSize) : 1;
        do
          claims.push(this.claimFor(endpointId, session, lane)); // issues the claim now: the store counts it at once
        while (--group > 0 && !store.surelyEmpty?.(endpointId));
      }
      // Out of credits with jobs left (only a store that counts its queue can say so: without, keep starting at 1).
      if (claims.length < batch && store.surelyEmpty && !store.surelyEmpty(endpointId)) this.nextBatch.set(key, batch);
      if (claims.length === 0) return;
      const got = await Promise.all(claims);
      if (!got.every(Boolean)) {
        this.nextBatch.delete(key);
        return;
      }
    }
  }

  /** Claims one queued job for `session` (holding one of its credits meanwhile) and assigns it; false if none. */
  private async claimFor(endpointId: string, session: WorkerSession, lane: ClaimLane | undefined): Promise<boolean> {
    const { store, clock, events, logger } = this.ctx;
    session.reserved++;
    let job: JobRecord | undefined;
    try {
      job = await (lane === undefined
        ? store.claim(endpointId, session.workerId, clock.now())
        : store.claim(endpointId, session.workerId, clock.now(), lane));
    } catch (err) {
      // The store went away mid-claim: the claim may have committed without us seeing the job. The worker
      // reconnects, and its hello (adopt) requeues whatever the store holds for it that it does not run.
      if (err instanceof StoreUnavailableError) session.close(1013, 'store unavailable');
      throw err;
    } finally {
      session.reserved--;
    }
    if (!job) return false;
    if (session.closed) {
      await this.requeue(job, 'worker closed during dispatch');
      return true;
    }
    session.hold(job.id, job.attempt);
    if (!session.warm) {
      session.warm = true;
      if (job.queuedAt < session.connectedAt) this.ctx.onColdStart?.(endpointId);
    }
    if (job.executionDeadline !== undefined) this.ctx.wakeAt(job.executionDeadline);
    // Built by assignment, not with conditional spreads (a spread of a small object is a runtime call each).
    const msg: Extract<ServerMessage, { type: 'job.assign' }> = {
      type: 'job.assign',
      id: job.id,
      attempt: job.attempt,
      input: job.input,
    };
    if (job.s3Config) msg.s3Config = job.s3Config;
    if (job.batchId !== undefined) msg.batchId = job.batchId;
    if (job.executionDeadline !== undefined) msg.deadline = job.executionDeadline;
    if (this.ctx.tracer) {
      const traceparent = this.ctx.tracer.assigned(job, session.workerId);
      if (traceparent) msg.traceparent = traceparent;
    }
    session.send(msg);
    logger.debug('job dispatched', { jobId: job.id, endpointId, workerId: session.workerId, attempt: job.attempt });
    events.emit(job.id, 'change', undefined, job); // the claimed record as stored: /runsync waiters need not read it
    this.ctx.eventWebhooks?.started(job);
    return true;
  }

  /** Tells the worker running `job` (if connected) to stop that attempt. */
  stop(job: JobRecord, reason: CancelMessage['reason']): void {
    if (!job.workerId) return;
    const session = this.ctx.registry.get(job.workerId);
    if (!session) return this.remoteStop?.(job, reason); // its worker may be connected to another replica
    if (session.inflight.get(job.id) !== job.attempt) return;
    session.send({ type: 'job.cancel', id: job.id, attempt: job.attempt, reason });
  }

  /** Set by `wireCluster`: a stop for a worker not connected here goes to the other replicas. */
  remoteStop: ((job: JobRecord, reason: CancelMessage['reason']) => void) | undefined;

  /** Requeues a running attempt (or fails it past maxAttempts) and wakes waiters. */
  async requeue(job: JobRecord, why: string): Promise<void> {
    const { store, clock, options, events, logger } = this.ctx;
    const after = await store.requeue(job.id, {
      attempt: job.attempt,
      now: clock.now(),
      maxAttempts: options.maxAttempts,
      failError: WORKER_LOST,
      retention: options.retention,
    });
    if (!after) return;
    logger.warn(after.status === 'IN_QUEUE' ? 'job requeued' : 'job failed: worker lost', {
      jobId: job.id,
      endpointId: job.endpointId,
      workerId: job.workerId,
      attempt: job.attempt,
      why,
    });
    if (after.status !== 'IN_QUEUE') return finishedJob(this.ctx, after);
    this.ctx.tracer?.requeued(job, why);
    events.emit(job.id, 'change');
    this.pump(after.endpointId);
  }
}
