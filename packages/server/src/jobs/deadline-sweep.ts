import type { CoreContext } from './context.js';
import { finishedJob } from './terminal.js';
import { SERVER_LIMITS } from '../defaults.js';
import type { Dispatcher } from './dispatcher.js';

/** How many jobs each deadline rule touched in one sweep. */
export interface SweepReport {
  expired: number;
  timedOut: number;
  retained: number;
  requeued: number;
}

/**
 * One pass over due deadlines: ttl (delete, stopping a running job), executionTimeout (TIMED_OUT and stop),
 * retention (delete) and lost-worker leases (requeue). Returns how many jobs each rule touched.
 */
export async function sweepDeadlines(
  ctx: CoreContext,
  dispatcher: Dispatcher,
  limit = SERVER_LIMITS.sweepBatch,
): Promise<SweepReport> {
  const { store, clock, options, events, logger } = ctx;
  const now = clock.now();
  const due = await store.due(now, limit);
  const out = { expired: 0, timedOut: 0, retained: 0, requeued: 0 };
  for (const job of due.expired) {
    if (job.status === 'IN_PROGRESS') dispatcher.stop(job, 'expired');
    if (await store.delete(job.id, { expiresAt: job.expiresAt })) {
      out.expired++;
      logger.info('job expired (ttl)', {
        jobId: job.id,
        endpointId: job.endpointId,
        workerId: job.workerId,
        attempt: job.attempt,
        status: job.status,
      });
      events.emit(job.id, 'deleted');
    }
  }
  for (const job of due.timedOut) {
    const error = `execution timed out after ${job.executionTimeout} ms`;
    const after = await store.finish(job.id, job.attempt, { status: 'TIMED_OUT', error }, now, options.retention);
    if (!after) continue;
    out.timedOut++;
    dispatcher.stop(job, 'timed_out');
    logger.warn('job timed out', {
      jobId: job.id,
      endpointId: job.endpointId,
      workerId: job.workerId,
      attempt: job.attempt,
    });
    finishedJob(ctx, after);
  }
  // Retention deletes are issued together, not one await each: SQLite's group commit takes them in one
  // transaction and PostgreSQL pipelines them (issue #40's volume run: one at a time under traffic, 35 deletes/s
  // on PostgreSQL and stalls of 143-574 ms while a backlog drained).
  const retained = due.retained.filter((job) => job.retainUntil !== undefined);
  const deleted = await Promise.all(retained.map((job) => store.delete(job.id, { retainUntil: job.retainUntil! })));
  deleted.forEach((ok, i) => {
    if (!ok) return;
    out.retained++;
    events.emit(retained[i]!.id, 'deleted');
  });
  for (const job of due.leaseExpired) {
    await dispatcher.requeue(job, 'worker did not come back within the grace period');
    out.requeued++;
  }
  return out;
}
