import type { CancelMessage, WorkerMessage } from '@berth/protocol';
import type { JobRecord } from '../store/types.js';
import type { WorkerSession } from '../ws/worker-session.js';
import { notifyTerminal, type CoreContext } from './context.js';
import { recordJobLogs } from './job-logs.js';
import { StreamAppender } from './stream-appender.js';

type JobReport = Extract<WorkerMessage, { type: 'job.progress' | 'job.stream' | 'job.complete' | 'job.fail' }>;
const isJobReport = (m: WorkerMessage): m is JobReport => m.type === 'job.progress' || m.type === 'job.stream' || m.type === 'job.complete' || m.type === 'job.fail';

/** Most claims one dispatch pass issues before awaiting them. */
const CLAIM_BATCH = 64;
const WORKER_LOST = 'worker lost: the job was requeued too many times after its worker disconnected';

/**
 * Moves jobs between the store and workers: claims queued jobs for workers with free credits (credit-based
 * flow control), applies what workers report (only for the current attempt of a running job), and tells
 * workers to stop jobs that were cancelled, timed out or expired.
 */
export class Dispatcher {
  private readonly pumping = new Set<string>();
  private readonly again = new Set<string>();
  private readonly streams: StreamAppender;

  constructor(private readonly ctx: CoreContext) {
    this.streams = new StreamAppender(ctx);
  }

  /** Dispatches queued jobs of an endpoint while some worker has a free credit. Safe to call often. */
  pump(endpointId: string): void {
    if (this.pumping.has(endpointId)) {
      this.again.add(endpointId);
      return;
    }
    this.pumping.add(endpointId);
    void this.drainQueue(endpointId)
      .catch((err) => this.ctx.logger.error('dispatch failed', { endpointId, err: String(err) }))
      .finally(() => {
        this.pumping.delete(endpointId);
        if (this.again.delete(endpointId)) this.pump(endpointId);
      });
  }

  /**
   * Claims in passes whose claims share one store batch (one COMMIT for SQLite) instead of taking one commit,
   * and one event-loop turn, each. A pass claims twice as many as the last one did (1, 2, 4 ... up to
   * CLAIM_BATCH, never past the free credits) while every claim finds a job: a deep queue drains in large
   * batches, a shallow one costs about one empty claim per pump. Stops when a claim finds the queue empty.
   */
  private async drainQueue(endpointId: string): Promise<void> {
    for (let batch = 1; ; batch = Math.min(batch * 2, CLAIM_BATCH)) {
      const claims: Promise<boolean>[] = [];
      for (let session = this.ctx.registry.pick(endpointId); session && claims.length < batch; session = this.ctx.registry.pick(endpointId)) {
        claims.push(this.claimFor(endpointId, session));
      }
      if (claims.length === 0) return;
      const got = await Promise.all(claims);
      if (!got.every(Boolean)) return;
    }
  }

  /** Claims one queued job for `session` (holding one of its credits meanwhile) and assigns it; false if none. */
  private async claimFor(endpointId: string, session: WorkerSession): Promise<boolean> {
    const { store, clock, events, logger } = this.ctx;
    session.reserved++;
    let job: JobRecord | undefined;
    try {
      job = await store.claim(endpointId, session.workerId, clock.now());
    } catch (err) {
      // The store went away mid-claim: the claim may have committed without us seeing the job. The worker
      // reconnects, and its hello (adopt) requeues whatever the store holds for it that it does not run.
      if ((err as { code?: string }).code === 'unavailable') session.close(1013, 'store unavailable');
      throw err;
    } finally {
      session.reserved--;
    }
    if (!job) return false;
    if (session.closed) {
      await this.requeue(job, 'worker closed during dispatch');
      return true;
    }
    session.inflight.set(job.id, job.attempt);
    if (job.executionDeadline !== undefined) this.ctx.wakeAt(job.executionDeadline);
    const msg = { type: 'job.assign' as const, id: job.id, attempt: job.attempt, input: job.input, ...(job.s3Config ? { s3Config: job.s3Config } : {}), ...(job.executionDeadline !== undefined ? { deadline: job.executionDeadline } : {}) };
    session.send(msg);
    logger.debug('job dispatched', { jobId: job.id, workerId: session.workerId, attempt: job.attempt });
    events.emit(job.id, 'change', undefined, job); // the claimed record as stored: /runsync waiters need not read it
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
    const after = await store.requeue(job.id, job.attempt, clock.now(), options.maxAttempts, WORKER_LOST, options.retention);
    if (!after) return;
    logger.warn(after.status === 'IN_QUEUE' ? 'job requeued' : 'job failed: worker lost', { jobId: job.id, workerId: job.workerId, attempt: job.attempt, why });
    events.emit(job.id, 'change');
    if (after.status === 'IN_QUEUE') this.pump(after.endpointId);
    else notifyTerminal(this.ctx, after);
  }

  /** Applies one decoded message from a worker. */
  async onWorkerMessage(s: WorkerSession, msg: WorkerMessage): Promise<void> {
    const { store, clock, events, options, logger } = this.ctx;
    if (isJobReport(msg) && s.inflight.get(msg.id) !== msg.attempt) return this.refuseReport(s, msg);
    switch (msg.type) {
      case 'job.progress':
        await this.streams.flushed(msg.id);
        if (await store.setProgress(msg.id, msg.attempt, msg.progress)) events.emit(msg.id, 'change');
        return;
      case 'job.stream':
        // In the background, merged with what follows; the job's progress and result wait for it.
        return this.streams.add(msg, () => s.close(1013, 'store unavailable'));
      case 'job.complete':
      case 'job.fail': {
        await this.streams.flushed(msg.id);
        s.inflight.delete(msg.id); // held by this session (checked above)
        let after: JobRecord | undefined;
        if (msg.type === 'job.complete') {
          const finishing = store.finish(msg.id, msg.attempt, { status: 'COMPLETED', output: msg.output }, clock.now(), options.retention);
          this.pump(s.endpointId); // the freed credit's next claim joins the finish's store batch (one commit)
          after = await finishing;
        } else if (msg.aborted) {
          // The worker gave the job up (its own shutdown) without being told to: hand it to another worker.
          const job = await store.get(msg.id);
          if (job && job.status === 'IN_PROGRESS' && job.attempt === msg.attempt) await this.requeue(job, 'worker abandoned it');
        } else {
          after = await store.finish(msg.id, msg.attempt, { status: 'FAILED', error: msg.error }, clock.now(), options.retention);
        }
        // Stored (or refused as stale): either way the worker can forget the result now.
        s.send({ type: 'job.ack', id: msg.id, attempt: msg.attempt });
        if (after) {
          logger.info(after.status === 'COMPLETED' ? 'job completed' : 'job failed', { jobId: msg.id, workerId: s.workerId, attempt: msg.attempt, ...(after.error ? { error: after.error } : {}) });
          events.emit(msg.id, 'change', undefined, after);
          notifyTerminal(this.ctx, after);
        } else if (msg.type === 'job.complete' || !msg.aborted) {
          logger.debug('stale result dropped', { jobId: msg.id, workerId: s.workerId, attempt: msg.attempt });
        }
        this.pump(s.endpointId);
        return;
      }
      case 'job.log':
        return recordJobLogs(this.ctx, s, msg);
      case 'concurrency':
        s.concurrency = msg.concurrency;
        this.pump(s.endpointId);
        return;
      case 'draining':
        s.draining = true;
        return;
      case 'ping':
        s.send({ type: 'pong', t: msg.t });
        return;
      case 'pong':
      case 'hello':
        return;
    }
  }

  /**
   * A report about a job attempt this session does not hold (another worker's job, an attempt reassigned away,
   * a job that ended): nothing is applied. A result is still acknowledged, so an honest worker forgets it.
   */
  private refuseReport(s: WorkerSession, msg: JobReport): void {
    if (msg.type === 'job.complete' || msg.type === 'job.fail') s.send({ type: 'job.ack', id: msg.id, attempt: msg.attempt });
    this.ctx.logger.debug('report for a job attempt this worker does not hold dropped', { jobId: msg.id, workerId: s.workerId, attempt: msg.attempt, type: msg.type });
  }

  /**
   * A worker (re)connected announcing the jobs it still runs. Those still current are adopted again; the rest
   * are returned as stale. Jobs the store holds for this worker id that it no longer has are requeued now.
   */
  async adopt(s: WorkerSession, inflight: { id: string; attempt: number }[]): Promise<{ id: string; attempt: number }[]> {
    const { store } = this.ctx;
    const stale: { id: string; attempt: number }[] = [];
    const claimed = new Set<string>();
    for (const ref of inflight) {
      const job = await store.get(ref.id);
      if (job && job.status === 'IN_PROGRESS' && job.attempt === ref.attempt && job.workerId === s.workerId && job.endpointId === s.endpointId && (await store.setLease(ref.id, ref.attempt, null))) {
        s.inflight.set(ref.id, ref.attempt);
        claimed.add(ref.id);
      } else stale.push(ref);
    }
    for (const job of await store.runningOn(s.workerId)) {
      // Only jobs of this worker's own endpoint: a hello naming another endpoint never touches them.
      if (!claimed.has(job.id) && job.endpointId === s.endpointId) await this.requeue(job, 'worker restarted without it');
    }
    return stale;
  }

  /** A worker's socket closed: its running jobs keep a lease for `workerGraceMs`, then go back to the queue. */
  async onSessionClosed(s: WorkerSession): Promise<void> {
    const { store, clock, options } = this.ctx;
    for (const [id, attempt] of s.inflight) {
      if (options.workerGraceMs === 0) {
        const job = await store.get(id);
        if (job && job.attempt === attempt) await this.requeue(job, 'worker disconnected');
      } else if (await store.setLease(id, attempt, clock.now() + options.workerGraceMs)) this.ctx.wakeAt(clock.now() + options.workerGraceMs);
    }
    s.inflight.clear();
  }
}
