import { DEFAULT_RESTART_POLICY } from '../internal/supervisor-types.js';
import type { ScaledEndpoint } from './container-spec.js';

// What the docker scaler keeps per endpoint and per container, and its restart timing.

/** One worker container the scaler knows of. */
export interface Tracked {
  name: string;
  /** Empty while the create call is under way. */
  id: string;
  /** When the scaler asked Docker to create it (epoch ms). */
  createdAt: number;
  /** Found at start (started by an earlier process): its cold start is not timed. */
  adopted: boolean;
  /** Counted as a worker: started here, adopted with this start's config, or connected since. */
  verified: boolean;
  /** How an adopted container's config differs from this start's (while not verified). */
  differs?: string;
  /** When it was adopted (epoch ms): one that differs is stopped if it does not connect in time. */
  adoptedAt?: number;
  connected: boolean;
  draining: boolean;
  /** The create and start calls are under way: an exit seen meanwhile is handled once they have returned. */
  starting: boolean;
  /** Its cold start was timed (its first job finished). */
  timed: boolean;
  /** When its create call returned, its start call returned, and it said hello to this control plane (epoch ms). */
  createdDoneAt?: number;
  startedAt?: number;
  connectedAt?: number;
}

export interface EndpointState {
  s: ScaledEndpoint;
  workers: Map<string, Tracked>;
  /** Names taken by containers without this deployment's labels: never used, never removed. */
  foreign: Set<string>;
  /** The worker token of new containers (settled when this process takes the scaling lease). */
  token: string | undefined;
  crashesInARow: number;
  /** No start before this (crash backoff, or the next look for a missing image). */
  notBefore: number;
  /** Why no worker can start (a missing image, crashes): /health counts it as one unhealthy worker. */
  problem: string | undefined;
  /** The problem as a queued job's `waitingFor`: the image is missing, or containers exit at start again and again. */
  reason: 'image_missing' | 'crash_loop' | undefined;
  /**
   * A load-balancing endpoint's names are never given twice by this process (a client's `strict` pin must not
   * reach a newer container under an old name): the highest number used so far.
   */
  lastNumber: number;
}

/** After this many crashes in a row, the scaler waits this long between tries. */
const GIVE_UP_DELAY_MS = 60_000;
/** A missing image is looked for again this often. */
export const IMAGE_RETRY_MS = 10_000;

export function newEndpointState(s: ScaledEndpoint): EndpointState {
  return {
    s,
    workers: new Map(),
    foreign: new Set(),
    token: undefined,
    crashesInARow: 0,
    notBefore: 0,
    problem: undefined,
    reason: undefined,
    lastNumber: 0,
  };
}

/** The wait before the next start after `crashesInARow` crashes: berth dev's 0.5 s doubling to 8 s; 60 s after 5. */
export function backoffDelay(crashesInARow: number): number {
  const p = DEFAULT_RESTART_POLICY;
  if (crashesInARow > p.maxImmediateCrashes) return GIVE_UP_DELAY_MS;
  return Math.min(p.maxDelayMs, p.baseDelayMs * 2 ** (crashesInARow - 1));
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
