import type { BatchSummary, JobObject } from '@berth/protocol';
import type { BatchCounts, BatchRecord } from '../store/batch-types.js';
import { toJobObject } from '../store/job-view.js';
import type { JobRecord } from '../store/types.js';

/** The API's view of a batch (`BatchSummary`, in @berth/protocol) from its record and its counts. */
export function toBatchSummary(b: BatchRecord, c: BatchCounts): BatchSummary {
  const counted = c.queued + c.inProgress + c.completed + c.failed + c.cancelled;
  const expired = Math.max(0, b.total - counted);
  const total = counted + expired;
  const ended = total - c.queued - c.inProgress;
  const s: BatchSummary = {
    id: b.id,
    endpointId: b.endpointId,
    status: b.status,
    requestTotal: total,
    requestQueued: c.queued,
    requestInProgress: c.inProgress,
    requestCompleted: c.completed,
    requestFailed: c.failed,
    requestCancelled: c.cancelled,
    requestExpired: expired,
    progress: total === 0 ? 1 : Math.round((ended / total) * 10_000) / 10_000,
    done: ended === total && b.status !== 'DRAFT',
    createdAt: b.createdAt,
  };
  if (b.name !== undefined) s.name = b.name;
  if (b.finalizedAt !== undefined) s.finalizedAt = b.finalizedAt;
  if (b.finishedAt !== undefined) s.finishedAt = b.finishedAt;
  return s;
}

/** One request of a batch page: the job object, with RunPod's `startedAt` / `completedAt` (ISO 8601) and `createdAt`. */
export function toBatchRequest(
  r: JobRecord,
): JobObject & { createdAt: string; startedAt?: string; completedAt?: string } {
  const o: JobObject & { createdAt: string; startedAt?: string; completedAt?: string } = {
    ...toJobObject(r),
    createdAt: new Date(r.createdAt).toISOString(),
  };
  if (r.startedAt !== undefined) o.startedAt = new Date(r.startedAt).toISOString();
  if (r.finishedAt !== undefined) o.completedAt = new Date(r.finishedAt).toISOString();
  return o;
}
