import type { Logger } from '@berth/protocol/log';
import type { WorkerControl } from '@berth/server';
import type { GpuAllocator } from '@berth/server/scaling';
import type { HttpWorkers } from '../internal/http-workers.js';
import type { Owner, ScaledEndpoint } from './container-spec.js';
import type { ContainerDetails, DockerApi } from './docker-api.js';
import type { PoolProblems } from './pool-problems.js';

export interface DockerPoolOptions {
  /** The control plane's `server.workers`: connections, cold starts, start failures, broken endpoints. */
  workers: WorkerControl;
  docker: DockerApi;
  endpoints: readonly ScaledEndpoint[];
  /** The `berth.control-plane` label: every replica of one control plane uses the same name. */
  name: string;
  /** `BERTH_URL` of the workers: where they reach the control plane (a balancer in front of replicas). */
  url: string;
  /**
   * This deployment's id (labels and worker ids) and the endpoints' worker tokens: settled by the lease holder
   * from the tokens its containers carry (`WorkerTokens`).
   */
  tokens: {
    deployment(): Promise<string>;
    settle(endpointId: string, inUse: readonly string[]): Promise<{ token: string; revoked: number }>;
  };
  logger: Logger;
  /**
   * The box's GPUs, for endpoints with `gpusPerWorker`: each container gets its own devices (`DeviceRequests`
   * with their ids, and a `berth.gpus` label that a later start reads back when it adopts the container).
   */
  gpus?: GpuAllocator;
  /**
   * Load-balancing endpoints' workers (`"type": "http"`): each container gets a free `PORT` on the host network,
   * is registered with the proxy (`server.lb`; it counts once its `/ping` says 200) and drained before its stop.
   */
  http?: HttpWorkers;
  /**
   * How long an adopted container whose config differs from this start (URL, image, token) has to connect
   * before it is stopped and removed; until it connects it is not counted. Default 60 s.
   */
  adoptTimeoutMs?: number;
  /** Clock (epoch ms). Default Date.now. */
  now?: () => number;
}

/**
 * What the parts of the Docker pool share (`DockerPool`, `container-start.ts`, `ownership.ts`, `adoption.ts`):
 * its options, whose containers it manages, its clock, the containers being removed, what adopted ones were
 * created with, and where it says why no worker can start.
 */
export interface PoolContext {
  readonly o: DockerPoolOptions;
  readonly owner: Owner;
  readonly now: () => number;
  /** Container ids whose removal is under way: not handled twice. */
  readonly removing: Set<string>;
  /** Containers inspected at adoption (by id): what they were created with. */
  readonly details: Map<string, ContainerDetails>;
  readonly problems: PoolProblems;
}
