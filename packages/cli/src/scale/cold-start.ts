import type { Logger } from '@berth/protocol/log';
import type { JobRecord, WorkerControl } from '@berth/server';
import type { Tracked } from './scaler-state.js';

/**
 * The parts of a cold start (ms): `scaler` the job's wait before the create call (when it was queued first),
 * `create` and `start` the Docker calls, `boot` from the start call's return to the worker's hello (node, the
 * bundle, the WebSocket), `assign` from the hello to the job's start, `run` the job itself.
 */
export function coldStartParts(t: Tracked, job: JobRecord, finishedAt: number): Record<string, number> {
  const parts: Record<string, number> = {};
  if (job.queuedAt <= t.createdAt) parts['scaler'] = t.createdAt - job.queuedAt;
  const marks: [string, number | undefined][] = [
    ['create', t.createdDoneAt],
    ['start', t.startedAt],
    ['boot', t.connectedAt],
    ['assign', job.startedAt],
    ['run', finishedAt],
  ];
  let last = t.createdAt;
  for (const [k, at] of marks) {
    if (at === undefined) continue;
    parts[k] = Math.max(0, at - last);
    last = at;
  }
  return parts;
}

/**
 * A job finished: the first one of a container started here times its cold start (the metric), and an info line
 * gives its parts: the job's wait for the scaler, the create and start calls, the boot inside the container up to
 * its hello, the assignment and the run.
 */
export function reportColdStart(t: Tracked, job: JobRecord, workers: WorkerControl, logger: Logger, now: number): void {
  if (t.adopted || t.timed || job.startedAt === undefined) return;
  t.timed = true;
  const ep = job.endpointId;
  const finishedAt = job.finishedAt ?? now;
  workers.coldStart(ep, 'first_job_assigned', job.startedAt - t.createdAt);
  workers.coldStart(ep, 'first_job_done', finishedAt - t.createdAt);
  const parts = coldStartParts(t, job, finishedAt);
  const text = Object.entries(parts)
    .map(([k, v]) => `${k} ${v} ms`)
    .join(', ');
  logger.info(`cold start of ${t.name}: ${finishedAt - t.createdAt} ms (${text})`, { endpointId: ep, ...parts });
}
