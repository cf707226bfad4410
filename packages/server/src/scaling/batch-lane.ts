import type { HealthReply } from '@berth/protocol';
import type { ScaledPolicy, ScaleLoopOptions } from './scale-loop.js';
import type { WorkerControl } from './worker-control.js';

/** An endpoint's batch lane (config `batch`): at most this many lane workers, none while no batch job is queued or running. */
export interface BatchLaneConfig {
  maxWorkers: number;
}

type LoopServer = ScaleLoopOptions['server'];

/** The lane's scaling policy: 0 to `maxWorkers`, the endpoint's idle timeout and concurrency. */
export function batchLanePolicy(ep: ScaledPolicy, lane: BatchLaneConfig): ScaledPolicy {
  const p: ScaledPolicy = {
    id: ep.id,
    minWorkers: 0,
    maxWorkers: lane.maxWorkers,
    idleTimeoutMs: ep.idleTimeoutMs,
    concurrency: ep.concurrency,
  };
  if (ep.gpusPerWorker !== undefined) p.gpusPerWorker = ep.gpusPerWorker;
  return p;
}

/**
 * What two scale loops of one control plane see when endpoints have a batch lane (issue #38): the interactive
 * loop its endpoint's jobs of no batch (the released batch backlog and the lane workers' running jobs taken out of
 * `/health`'s counts), the lane loop that backlog and those jobs only. Each loop's `setExpected` is summed with
 * the other's; the lane loop's wait reasons are not shown (a queued batch job waits for `batch_lane`).
 * Endpoints without a lane (not in `laneIds`) are seen as they are.
 */
export function batchLaneViews(
  server: LoopServer,
  laneIds: ReadonlySet<string>,
): { interactive: LoopServer; batch: LoopServer } {
  const w = server.workers;
  const expected = new Map<string, { interactive: number; batch: number }>();
  const setExpected = (lane: 'interactive' | 'batch', id: string, n: number) => {
    const e = expected.get(id) ?? { interactive: 0, batch: 0 };
    e[lane] = n;
    expected.set(id, e);
    w.setExpected(id, e.interactive + e.batch);
  };
  const laneRunning = (id: string) =>
    w
      .connected(id)
      .filter((c) => c.lane === 'batch')
      .reduce((n, c) => n + c.running, 0);
  const control = (lane: 'interactive' | 'batch'): WorkerControl => ({
    ...w,
    on: (event, fn) => w.on(event, fn),
    setExpected: (id, n) => (laneIds.has(id) ? setExpected(lane, id, n) : w.setExpected(id, n)),
    setWaitReason: (id, reason) => (lane === 'batch' ? undefined : w.setWaitReason(id, reason)),
  });
  const interactive: LoopServer = {
    workers: control('interactive'),
    health: async (id) => {
      const h = await server.health(id);
      if (!laneIds.has(id)) return h;
      const backlog = await w.batchBacklog(id);
      return withJobs(h, Math.max(0, h.jobs.inQueue - backlog), Math.max(0, h.jobs.inProgress - laneRunning(id)));
    },
  };
  const batch: LoopServer = {
    workers: control('batch'),
    health: async (id) => {
      const h = await server.health(id);
      return withJobs(h, await w.batchBacklog(id), laneRunning(id));
    },
  };
  return { interactive, batch };
}

function withJobs(h: HealthReply, inQueue: number, inProgress: number): HealthReply {
  return { ...h, jobs: { ...h.jobs, inQueue, inProgress } };
}
