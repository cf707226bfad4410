import type { JobObject } from '@berth/protocol';
import type { JobRecord } from '../store/types.js';
import type { CoreContext } from './context.js';
import { toJobObject } from '../store/job-view.js';

/** Jobs counted ahead of a queued job at most: a larger queue answers this number (docs/api.md). */
export const QUEUE_POSITION_CAP = 1000;

/**
 * The job object of `/status`: for an IN_QUEUE job also `queuePosition` (jobs of the endpoint ahead of it, up to
 * `QUEUE_POSITION_CAP`; left out by a store that cannot count) and `waitingFor` (why it is not running yet:
 * `WorkerRegistry.waitingFor`). Berth fields RunPod clients ignore.
 */
export async function withQueueInfo(ctx: CoreContext, job: JobRecord): Promise<JobObject> {
  const o = toJobObject(job);
  if (job.status !== 'IN_QUEUE') return o;
  // A request of a DRAFT batch runs once its batch is finalized: no place in the queue yet.
  if (job.batchId !== undefined && (await ctx.store.batches?.getBatch(job.batchId))?.status === 'DRAFT') {
    o.waitingFor = 'batch_draft';
    return o;
  }
  const position = await ctx.store.queuePosition?.(job.id, QUEUE_POSITION_CAP);
  if (position !== undefined) o.queuePosition = position;
  // Claimed between the two reads: no reason left to give (the next read shows it running).
  if (position !== undefined || !ctx.store.queuePosition)
    o.waitingFor = ctx.registry.waitingFor(
      job.endpointId,
      job.lowPriority,
      performance.now(),
      ctx.options.heartbeatMs,
      job.batchId !== undefined,
    );
  return o;
}
