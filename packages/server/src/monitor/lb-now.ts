import type { HealthReply } from '@berth/protocol';
import type { WorkerCounts } from './endpoint-ring.js';

/** What the Monitor reads of the load-balancing proxy (`server.lb`): the public shape of `LbService`. */
export interface LbSource {
  has(endpointId: string): boolean;
  /** `/health` of a load-balancing endpoint: requests waiting (`inQueue`) and in flight, workers by state. */
  health(endpointId: string): HealthReply;
  /** Ready workers (and any still finishing requests) with their requests in flight. */
  connected(endpointId: string): { workerId: string; running: number; draining: boolean }[];
}

/** A load-balancing endpoint now (`GET /v2/<ep>/monitor`'s `lb`). */
export interface LbNow {
  /** Requests waiting for a ready worker with room, and requests in flight. */
  waiting: number;
  inFlight: number;
  /** Workers by state: `ready` (`/ping` 200), `initializing` (started, or `/ping` 204), `unhealthy`. */
  workers: { ready: number; initializing: number; unhealthy: number };
  /** Each ready worker (or one still finishing requests) with its requests in flight; `draining`: being stopped. */
  serving: { workerId: string; inFlight: number; draining: boolean }[];
}

/** The endpoint's workers as the ring charts them (`starting`: initializing; no `draining` count in `/health`). */
export function lbGauges(h: HealthReply): { queue: number; workers: WorkerCounts } {
  const w = h.workers;
  return {
    queue: h.jobs.inQueue,
    workers: {
      idle: w.idle,
      running: w.running,
      starting: w.initializing,
      draining: w.throttled,
      unhealthy: w.unhealthy,
    },
  };
}

export function lbNow(lb: LbSource, endpointId: string, h: HealthReply): LbNow {
  return {
    waiting: h.jobs.inQueue,
    inFlight: h.jobs.inProgress,
    workers: { ready: h.workers.ready, initializing: h.workers.initializing, unhealthy: h.workers.unhealthy },
    serving: lb.connected(endpointId).map((w) => ({ workerId: w.workerId, inFlight: w.running, draining: w.draining })),
  };
}
