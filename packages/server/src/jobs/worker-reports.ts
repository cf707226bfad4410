import type { WorkerMessage } from '@berth/protocol';
import type { JobRecord } from '../store/types.js';
import type { WorkerSession } from '../workers/worker-session.js';
import type { CoreContext } from './context.js';
import { finishedJob } from './terminal.js';
import type { Dispatcher } from './dispatcher.js';
import { recordJobLogs } from './job-logs.js';
import { StreamAppender } from './stream-appender.js';

type JobReport = Extract<WorkerMessage, { type: 'job.progress' | 'job.stream' | 'job.complete' | 'job.fail' }>;
const isJobReport = (m: WorkerMessage): m is JobReport =>
  m.type === 'job.progress' || m.type === 'job.stream' || m.type === 'job.complete' || m.type === 'job.fail';

/**
 * Applies what workers report (WebSocket and pull workers alike): progress, stream chunks, results and logs, only
 * for the current attempt of a running job; adopts the jobs a reconnecting worker still runs; gives the jobs of a
 * closed session a lease.
 */
export class WorkerReports {
  private readonly streams: StreamAppender;

  constructor(
    private readonly ctx: CoreContext,
    private readonly dispatcher: Dispatcher,
  ) {
    this.streams = new StreamAppender(ctx);
  }

  /** Applies one decoded message from a worker. */
  async onWorkerMessage(s: WorkerSession, msg: WorkerMessage): Promise<void> {
    const { store, events, logger } = this.ctx;
    if (isJobReport(msg) && s.inflight.get(msg.id) !== msg.attempt) return this.refuseReport(s, msg);
    switch (msg.type) {
      case 'job.progress':
        await this.streams.flushed(msg.id);
        if (await store.setProgress(msg.id, msg.attempt, msg.progress)) {
          events.emit(msg.id, 'change');
          this.ctx.eventWebhooks?.progress(msg.id, msg.progress);
        }
        return;
      case 'job.stream':
        // In the background, merged with what follows; the job's progress and result wait for it.
        return this.streams.add(msg, () => s.close(1013, 'store unavailable'));
      case 'job.complete':
      case 'job.fail': {
        // Without chunks in flight, the finish is issued in this call (no turn lost): the finishes of one read join
        // one store batch, with the claims of the credits they free.
        if (this.streams.busy(msg.id)) await this.streams.flushed(msg.id);
        // A job with event webhooks: its held progress and output are stored before its terminal state (in order).
        if (this.ctx.eventWebhooks?.has(msg.id)) await this.ctx.eventWebhooks.finishing(msg.id);
        s.inflight.delete(msg.id); // held by this session (checked above)
        let after: JobRecord | undefined;
        try {
          after = await this.applyResult(s, msg);
        } catch (err) {
          // Not stored (a full disk, the store unreachable): not acknowledged, so the worker keeps the result.
          // Closing the connection makes it reconnect and send the result again, until it can be stored.
          s.inflight.set(msg.id, msg.attempt);
          logger.error('job result not stored; the worker will send it again', {
            jobId: msg.id,
            workerId: s.workerId,
            attempt: msg.attempt,
            err,
          });
          s.close(1013, 'store unavailable: result not stored');
          return;
        }
        // Stored (or refused as stale): either way the worker can forget the result now.
        s.send({ type: 'job.ack', id: msg.id, attempt: msg.attempt });
        if (after) {
          logger.info(after.status === 'COMPLETED' ? 'job completed' : 'job failed', {
            jobId: msg.id,
            endpointId: s.endpointId,
            workerId: s.workerId,
            attempt: msg.attempt,
            ...(after.error ? { error: after.error } : {}),
          });
          finishedJob(this.ctx, after);
        } else if (msg.type === 'job.complete' || !msg.aborted) {
          logger.debug('stale result dropped', { jobId: msg.id, workerId: s.workerId, attempt: msg.attempt });
        }
        this.dispatcher.pump(s.endpointId);
        return;
      }
      case 'job.log':
        return recordJobLogs(this.ctx, s, msg);
      case 'batch':
        this.ctx.batches.observe(s.endpointId, msg.size);
        return;
      case 'concurrency':
        s.concurrency = msg.concurrency;
        this.dispatcher.pump(s.endpointId);
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

  /** Stores a worker's result (finish, or a requeue of an abandoned attempt): the job after, if it finished. */
  private async applyResult(
    s: WorkerSession,
    msg: Extract<WorkerMessage, { type: 'job.complete' | 'job.fail' }>,
  ): Promise<JobRecord | undefined> {
    const { store, clock, options } = this.ctx;
    if (msg.type === 'job.complete') {
      // An output uploaded as a blob (issue #35) is that blob; one that cannot be found fails the job.
      const output = msg.outputBlob === undefined ? msg.output : await this.ctx.blobs.output(msg.id, msg.outputBlob);
      const patch =
        output === undefined
          ? ({ status: 'FAILED', error: `the worker's uploaded output ${msg.outputBlob} was not found` } as const)
          : ({ status: 'COMPLETED', output } as const);
      const finishing = store.finish(msg.id, msg.attempt, patch, clock.now(), options.retention);
      this.dispatcher.pump(s.endpointId); // the freed credit's next claim joins the finish's store batch (one commit)
      return finishing;
    }
    if (msg.aborted) {
      // The worker gave the job up (its own shutdown) without being told to: hand it to another worker.
      const job = await store.get(msg.id);
      if (job && job.status === 'IN_PROGRESS' && job.attempt === msg.attempt)
        await this.dispatcher.requeue(job, 'worker abandoned it');
      return undefined;
    }
    return store.finish(msg.id, msg.attempt, { status: 'FAILED', error: msg.error }, clock.now(), options.retention);
  }

  /**
   * A report about a job attempt this session does not hold (another worker's job, an attempt reassigned away,
   * a job that ended): nothing is applied. A result is still acknowledged, so an honest worker forgets it.
   */
  private refuseReport(s: WorkerSession, msg: JobReport): void {
    if (msg.type === 'job.complete' || msg.type === 'job.fail')
      s.send({ type: 'job.ack', id: msg.id, attempt: msg.attempt });
    this.ctx.logger.debug('report for a job attempt this worker does not hold dropped', {
      jobId: msg.id,
      workerId: s.workerId,
      attempt: msg.attempt,
      type: msg.type,
    });
  }

  /**
   * A worker (re)connected announcing the jobs it still runs. Those still current are adopted again; the rest
   * are returned as stale. Jobs the store holds for this worker id that it no longer has are requeued now.
   */
  async adopt(
    s: WorkerSession,
    inflight: { id: string; attempt: number }[],
  ): Promise<{ id: string; attempt: number }[]> {
    const { store } = this.ctx;
    const stale: { id: string; attempt: number }[] = [];
    const claimed = new Set<string>();
    for (const ref of inflight) {
      const job = await store.get(ref.id);
      if (
        job &&
        job.status === 'IN_PROGRESS' &&
        job.attempt === ref.attempt &&
        job.workerId === s.workerId &&
        job.endpointId === s.endpointId &&
        (await store.setLease(ref.id, ref.attempt, null))
      ) {
        s.hold(ref.id, ref.attempt);
        this.ctx.eventWebhooks?.track(job);
        claimed.add(ref.id);
      } else stale.push(ref);
    }
    for (const job of await store.runningOn(s.workerId)) {
      // Only jobs of this worker's own endpoint: a hello naming another endpoint never touches them.
      if (!claimed.has(job.id) && job.endpointId === s.endpointId)
        await this.dispatcher.requeue(job, 'worker restarted without it');
    }
    return stale;
  }

  /** A worker's socket closed: its running jobs keep a lease for `workerGraceMs`, then go back to the queue. */
  async onSessionClosed(s: WorkerSession): Promise<void> {
    const { store, clock, options } = this.ctx;
    for (const [id, attempt] of s.inflight) {
      if (options.workerGraceMs === 0) {
        const job = await store.get(id);
        if (job && job.attempt === attempt) await this.dispatcher.requeue(job, 'worker disconnected');
      } else if (await store.setLease(id, attempt, clock.now() + options.workerGraceMs))
        this.ctx.wakeAt(clock.now() + options.workerGraceMs);
    }
    s.inflight.clear();
  }
}
