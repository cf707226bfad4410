import { BerthError } from '@berth/protocol';
import type { Clock } from '../clock.js';
import { allowAll, type Guard } from '../http/guard.js';
import { FixedWindowCounter } from './fixed-window.js';
import { RATE_LIMIT_WINDOW_MS, type ResolvedRateLimits } from './rate-limit-options.js';

export interface RateLimitDeps {
  limits: ResolvedRateLimits;
  clock: Clock;
  /** Workers of the endpoint that count towards its limit (connected and not draining). */
  runningWorkers(endpointId: string): number;
  /**
   * Live control-plane replicas sharing the store (default 1). Each counts alone and allows its share,
   * `ceil(limit / replicas)`: behind a balancer that spreads requests evenly the cluster-wide limit holds, and it
   * never admits more than `limit + replicas - 1` per window (see docs/deployment.md).
   */
  replicas?(): number;
}

/** The job tokens of one job together get this fraction of their key's limit (at least 1 request per window). */
export const JOB_TOKEN_SHARE = 10;
const tokenLimit = (keyLimit: number) => Math.max(1, Math.ceil(keyLimit / JOB_TOKEN_SHARE));

/**
 * The rate-limit guard (docs/rate-limits.md): counts each request per API key x endpoint x operation in fixed
 * 10-second windows; the effective limit is `max(base, running workers x perWorker)`. Requests carrying a job
 * token count per job x operation instead, against a tenth of that limit (`JOB_TOKEN_SHARE`), and not against the
 * key's. Over it: 429 `rate_limited` with `Retry-After` (seconds to the end of the window).
 */
export function createRateLimitGuard({
  limits,
  clock,
  runningWorkers,
  replicas,
}: RateLimitDeps): Guard & { counter: FixedWindowCounter } {
  const counter = new FixedWindowCounter(RATE_LIMIT_WINDOW_MS);
  if (!limits.enabled)
    return Object.assign<Guard, { counter: FixedWindowCounter }>((ctx) => allowAll(ctx), { counter });
  const guard: Guard = ({ principal, endpointId, operation }) => {
    const base = limits.base[operation] ?? 0;
    const limit = Math.max(base, runningWorkers(endpointId) * limits.perWorker);
    const share = Math.ceil(limit / Math.max(1, replicas?.() ?? 1));
    const token = principal.jobToken;
    // A job token counts in a bucket of its job's own, never in its key's: a page cannot lock its backend out.
    const r = token
      ? counter.hit(
          `jt\u0000${principal.keyId}\u0000${token.jobId}\u0000${endpointId}\u0000${operation}`,
          tokenLimit(share),
          clock.now(),
        )
      : counter.hit(`${principal.keyId}\u0000${endpointId}\u0000${operation}`, share, clock.now());
    if (r.ok) return undefined;
    const shown = token ? tokenLimit(limit) : limit;
    const error = new BerthError(
      'rate_limited',
      `rate limit of ${shown} ${operation} requests per 10 s ${token ? `for the job tokens of job ${token.jobId}` : `on endpoint ${endpointId}`} reached; retry in ${r.retryAfterSec} s`,
      { limit: shown, operation, retryAfter: r.retryAfterSec },
    );
    return { error, headers: { 'retry-after': String(r.retryAfterSec) } };
  };
  return Object.assign(guard, { counter });
}
