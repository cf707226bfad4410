import type { ResolvedEndpoint } from '../config/index.js';
import { DOCKER_STOP_GRACE_S, IMAGE_DRAIN_TIMEOUT_MS } from './dockerfile.js';

/** `deploy.json`, written next to each image's Dockerfile: what the platform running the image must be told. */
export interface DeploySettings {
  endpoint: string;
  image: string;
  /** The worker's drain deadline inside the image (`BERTH_DRAIN_TIMEOUT_MS`). */
  drainTimeoutMs: number;
  /** `docker run --stop-timeout` (and `docker stop -t`): the drain deadline plus time to hand jobs back and exit. */
  stopTimeoutSeconds: number;
  kubernetes: { terminationGracePeriodSeconds: number };
  /** Baked into the image as ENV (the config's per-endpoint worker settings). */
  env: Record<string, string>;
  /** The config's scaling settings, for whatever starts and stops containers. */
  scaling: { minWorkers: number; maxWorkers: number; idleTimeoutMs: number };
  /** Debian packages installed in the image. */
  apt: string[];
}

/** Seconds a stopping worker needs beyond its drain deadline: hand jobs back, wait for acks (2 s), exit. */
const EXIT_MARGIN_S = 3;

/**
 * The deployment settings of one endpoint's image: its drain deadline (the config's `drainTimeoutMs`, else 7 s,
 * under Docker's default 10 s grace) and a stop timeout / Kubernetes grace period that leaves room for it.
 *
 * @example deploySettings(ep).stopTimeoutSeconds // 10 with the default 7 s drain; 63 with drainTimeoutMs 60000
 */
export function deploySettings(ep: ResolvedEndpoint): DeploySettings {
  const drainTimeoutMs = ep.drainTimeoutMs ?? IMAGE_DRAIN_TIMEOUT_MS;
  const stopTimeoutSeconds = Math.max(DOCKER_STOP_GRACE_S, Math.ceil(drainTimeoutMs / 1000) + EXIT_MARGIN_S);
  const env: Record<string, string> = { BERTH_DRAIN_TIMEOUT_MS: String(drainTimeoutMs) };
  if (ep.concurrency !== undefined) env['BERTH_CONCURRENCY'] = String(ep.concurrency);
  return {
    endpoint: ep.id,
    image: `${ep.id}-worker`,
    drainTimeoutMs,
    stopTimeoutSeconds,
    kubernetes: { terminationGracePeriodSeconds: Math.max(30, stopTimeoutSeconds) },
    env,
    scaling: { minWorkers: ep.minWorkers, maxWorkers: ep.maxWorkers, idleTimeoutMs: ep.idleTimeoutMs },
    apt: [...ep.apt],
  };
}
