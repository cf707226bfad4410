import type { JobRecord } from '../store/types.js';
import type { CoreContext } from './context.js';

/**
 * The one step after a store write that made a job terminal (completed, failed, cancelled, timed out, failed as
 * worker lost): wakes its waiters with the stored record and runs the terminal hooks.
 */
export function finishedJob(ctx: CoreContext, job: JobRecord): void {
  ctx.events.emit(job.id, 'change', undefined, job);
  notifyTerminal(ctx, job);
}

/**
 * Terminal hooks only (webhook kick, metrics) and the retention wake-up, for a job whose waiters were woken
 * already (the model routes emit their own events). Each hook's failure is logged, never thrown.
 */
export function notifyTerminal(ctx: CoreContext, job: JobRecord): void {
  if (job.retainUntil !== undefined) ctx.wakeAt(job.retainUntil);
  for (const fn of ctx.onTerminal) {
    try {
      fn(job);
    } catch (err) {
      ctx.logger.error('terminal hook failed', { jobId: job.id, err });
    }
  }
}
