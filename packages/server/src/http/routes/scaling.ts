import { BerthError, type HealthReply, type ScalingReply } from '@berth/protocol';
import { desiredWorkers, type ScalingPolicy } from '../../scaling/policy.js';
import type { QueueWait } from '../../scaling/queue-wait.js';
import type { ApiResponse } from '../types.js';
import type { RouteContext } from './route-context.js';

/** What the scaling route needs: each endpoint's policy (from the config) and the queue-wait tracker. */
export interface ScalingDeps {
  policies: ReadonlyMap<string, ScalingPolicy>;
  queueWait: QueueWait;
  now: () => number;
}

/** A load-balancing endpoint's demand: its `/health` (requests waiting and in flight, workers) and the oldest wait. */
export interface LbDemand {
  health: HealthReply;
  waitedMs: number | undefined;
}

/**
 * `GET /v2/<ep>/scaling`: the desired worker count by the endpoint's scaling policy (the one `berth dev` and
 * `berth serve --scale docker` act on), with what it was computed from. Read-only; the API key must be allowed
 * the endpoint (a key scoped to other endpoints gets 403). A load-balancing endpoint (`lb`) counts requests
 * waiting for a worker as `inQueue` and requests in flight as `inProgress`, as its own scaler does.
 */
export async function scaling(rc: RouteContext, deps: ScalingDeps, lb?: LbDemand): Promise<ApiResponse> {
  const policy = deps.policies.get(rc.endpointId);
  if (!policy)
    throw new BerthError(
      'endpoint_not_found',
      `endpoint ${rc.endpointId} has no scaling settings (serve it with --config <file> naming it)`,
    );
  const { jobs, workers: w } = lb?.health ?? (await rc.service.health(rc.endpointId));
  const connected = w.idle + w.running;
  const ids = Array.from({ length: connected + w.initializing }, (_, i) => `w${i}`);
  const running = new Map(ids.slice(0, connected).map((id, i) => [id, i < w.running ? 1 : 0] as [string, number]));
  const queuedForMs = lb ? lb.waitedMs : deps.queueWait.observe(rc.endpointId, jobs.inQueue, deps.now());
  const desired = desiredWorkers(policy, {
    inQueue: jobs.inQueue,
    inProgress: jobs.inProgress,
    ...(queuedForMs !== undefined ? { queuedForMs } : {}),
    workers: ids,
    running,
  });
  const reply: ScalingReply = {
    endpoint: rc.endpointId,
    desiredWorkers: desired,
    minWorkers: policy.minWorkers,
    maxWorkers: policy.maxWorkers,
    scaler: policy.scaler?.type ?? 'request-count',
    inQueue: jobs.inQueue,
    inProgress: jobs.inProgress,
    workers: ids.length,
  };
  return { status: 200, json: reply };
}
