import type { Operation } from '../http/guard.js';
import { ConfigError } from '../errors.js';

/** Rate-limit window (docs/rate-limits.md): fixed 10-second windows. */
export const RATE_LIMIT_WINDOW_MS = 10_000;

/** Operations that have a base limit; `status` also counts `/status-sync` and the webhook log. */
export type LimitedOperation = Operation;

/** Base requests per 10-second window per API key x endpoint x operation (docs/rate-limits.md). */
export const DEFAULT_RATE_LIMITS: Readonly<Record<LimitedOperation, number>> = {
  runsync: 2000,
  run: 1000,
  status: 2000,
  stream: 2000,
  cancel: 100,
  retry: 1000,
  'purge-queue': 2,
  health: 2000,
  openai: 2000,
};

/** Default per-worker allowance: each running worker of an endpoint adds this many requests per window. */
export const DEFAULT_PER_WORKER = 50;

/** `rateLimits` of `createServer`. */
export interface RateLimitOptions {
  /** `false` turns rate limiting off (local benchmarks). CLI: `BERTH_RATE_LIMITS=off`. Default: `true`. */
  enabled?: boolean;
  /** Base limit per operation per 10 s window, merged over `DEFAULT_RATE_LIMITS`. */
  base?: Partial<Record<LimitedOperation, number>>;
  /** Requests per window each running worker of the endpoint adds. Default: 50. */
  perWorker?: number;
}

export interface ResolvedRateLimits {
  enabled: boolean;
  base: Record<string, number>;
  perWorker: number;
}

function count(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 0)
    throw new ConfigError(`option ${name} must be a whole number >= 0, got ${String(v)}`);
  return v;
}

/** Applies the defaults; a bad value throws naming the option. */
export function resolveRateLimits(o: RateLimitOptions | boolean | undefined): ResolvedRateLimits {
  const opts = typeof o === 'object' ? o : { enabled: o ?? true };
  const base: Record<string, number> = { ...DEFAULT_RATE_LIMITS };
  for (const [op, v] of Object.entries(opts.base ?? {})) {
    if (!Object.hasOwn(DEFAULT_RATE_LIMITS, op))
      throw new ConfigError(
        `option rateLimits.base: unknown operation "${op}" (known: ${Object.keys(DEFAULT_RATE_LIMITS).join(', ')})`,
      );
    if (v !== undefined) base[op] = count(`rateLimits.base.${op}`, v);
  }
  return {
    enabled: opts.enabled ?? true,
    base,
    perWorker: count('rateLimits.perWorker', opts.perWorker ?? DEFAULT_PER_WORKER),
  };
}
