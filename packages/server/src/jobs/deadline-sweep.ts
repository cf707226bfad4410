import type { CoreContext } from './context.js';
import { finishedJob } from './terminal.js';
import { SERVER_LIMITS } from '../defaults.js';
import type { Dispatcher } from './dispatcher.js';
import type { DueJobs } from '../store/types.js';

/** How many jobs each deadline rule touched in one sweep. */
export interface SweepReport {
  expired: number;
  timedOut: number;
  retained: number;
  requeued: number;
  /** A kind came back at the read limit: more is due now (the server sweeps again at once, not a second later). */
  more: boolean;
}

/**
 * Retention deletes go in slices, one event-loop turn each with a turn for other work between them, so a deep
 * sweep (a million finished jobs) never holds the loop for long: each slice is sized so its synchronous part
 * (SQLite runs its statements inside the call, and its group commit takes the slice in one transaction) stays
 * near SWEEP_SLICE_MS. A store with `deleteRetained` (PostgreSQL) deletes a slice with one statement per table.
 */
const SWEEP_SLICE_MS = 4;
const SLICE = { first: 64, min: 8, max: 512 };
/** Each store's slice size, learned from its last slice (per store: servers in one process differ). */
const slices = new WeakMap<object, number>();

async function deleteRetained(ctx: CoreContext, due: DueJobs['retained']): Promise<number> {
  const { store, events } = ctx;
  let slice = slices.get(store) ?? SLICE.first;
  const jobs = due.filter((job) => job.retainUntil !== undefined);
  let n = 0;
  for (let i = 0; i < jobs.length; ) {
    if (i > 0) await new Promise((r) => setImmediate(r));
    const part = jobs.slice(i, i + slice);
    i += part.length;
    const t0 = performance.now();
    const pending = store.deleteRetained
      ? store.deleteRetained(part.map((j) => ({ id: j.id, retainUntil: j.retainUntil! })))
      : Promise.all(part.map((j) => store.delete(j.id, { retainUntil: j.retainUntil! }))).then((ok) =>
          part.filter((_, k) => ok[k]).map((j) => j.id),
        );
    const spent = performance.now() - t0;
    // A one-statement store's slice costs the loop only its ids; the whole batch goes at once.
    const max = store.deleteRetained ? SERVER_LIMITS.sweepBatchOneStatement : SLICE.max;
    slice = Math.round(Math.min(max, Math.max(SLICE.min, (part.length * SWEEP_SLICE_MS) / Math.max(spent, 0.1))));
    slices.set(store, slice);
    const gone = await pending;
    for (const id of gone) events.emit(id, 'deleted');
    n += gone.length;
  }
  return n;
}

/**
 * One pass over due deadlines: ttl (delete, stopping a running job), executionTimeout (TIMED_OUT and stop),
 * retention (delete) and lost-worker leases (requeue). Returns how many jobs each rule touched.
 */
export async function sweepDeadlines(
  ctx: CoreContext,
  dispatcher: Dispatcher,
  limit = ctx.store.deleteRetained ? SERVER_LIMITS.sweepBatchOneStatement : SERVER_LIMITS.sweepBatch,
): Promise<SweepReport> {
  const { store, clock, options, events, logger } = ctx;
  const now = clock.now();
  const due = await store.due(now, limit);
  const out = { expired: 0, timedOut: 0, retained: 0, requeued: 0, more: false };
  out.more = [due.expired, due.timedOut, due.retained, due.leaseExpired].some((d) => d.length >= limit);
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
  out.retained = await deleteRetained(ctx, due.retained);
  for (const job of due.leaseExpired) {
    await dispatcher.requeue(job, 'worker did not come back within the grace period');
    out.requeued++;
  }
  return out;
}
