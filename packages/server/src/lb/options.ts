import { ConfigError } from '../errors.js';

/**
 * A load-balancing endpoint (`"type": "http"` in berth.config; docs/load-balancing.md): its workers are HTTP
 * servers of their own (`PORT`, health at `PORT_HEALTH` + `healthPath`), requests to `/v2/<ep>/lb/<path>` are
 * forwarded to a ready one. Defaults follow RunPod's load-balancing endpoints.
 */
export interface LbEndpointOptions {
  /** Requests one worker gets at once. Default 1 (RunPod's `max_concurrency` default). */
  concurrency?: number;
  /** The worker must answer (the whole answer streamed) within this, ms; else 504 `processing_timeout`. Default 330000 (RunPod's 5.5 min). */
  requestTimeoutMs?: number;
  /** Largest request body, bytes, counted while streaming; larger: 413 `payload_too_large`. Default 30 MB (RunPod's). */
  maxBodyBytes?: number;
  /** How long a request waits for a ready worker with room (a cold start, all busy); then 400 `no_workers_available`. Default 120000 (RunPod's 2 min). */
  coldStartWaitMs?: number;
  /** How long a `strict` / `strict-resume` request waits for its worker; then 400 `worker_timeout`. Default 300000 (RunPod's ~5 min). */
  affinityWaitMs?: number;
  /** The health path on `PORT_HEALTH`: 200 ready, 204 initializing, anything else unhealthy. Default `/ping`. */
  healthPath?: string;
  /** How often a ready worker's health is checked, ms (a starting one: every 50 ms). Default 1000. */
  healthIntervalMs?: number;
  /** Failed health checks in a row after which a ready worker is drained and replaced. Default 3. */
  unhealthyAfter?: number;
}

export type ResolvedLbEndpoint = Required<LbEndpointOptions>;

export const LB_DEFAULTS: ResolvedLbEndpoint = {
  concurrency: 1,
  requestTimeoutMs: 330_000,
  maxBodyBytes: 30 * 1024 * 1024,
  coldStartWaitMs: 120_000,
  affinityWaitMs: 300_000,
  healthPath: '/ping',
  healthIntervalMs: 1_000,
  unhealthyAfter: 3,
};

/** Defaults applied; a bad value throws a `ConfigError` naming the option. */
export function resolveLbEndpoint(id: string, o: LbEndpointOptions = {}): ResolvedLbEndpoint {
  const r = { ...LB_DEFAULTS, ...Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) };
  for (const k of Object.keys(LB_DEFAULTS) as (keyof ResolvedLbEndpoint)[]) {
    if (k === 'healthPath') continue;
    const v = r[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
      throw new ConfigError(`option lb.${id}.${k} must be a whole number of at least 1, got ${String(v)}`);
  }
  if (typeof r.healthPath !== 'string' || !r.healthPath.startsWith('/'))
    throw new ConfigError(`option lb.${id}.healthPath must be a path starting with "/", got ${String(r.healthPath)}`);
  return r;
}
