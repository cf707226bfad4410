import type { Operation } from '../http/guard.js';
import { describeValue } from '@berth/protocol';
import { ConfigError } from '../errors.js';

/** Rate-limit window (docs/rate-limits.md): fixed 10-second windows. */
export const RATE_LIMIT_WINDOW_MS = 10_000;

/**
 * Base requests per 10-second window per API key x endpoint x operation (docs/rate-limits.md); every `Operation`
 * has one (`status` also counts `/status-sync` and the webhook log).
 */
export const DEFAULT_RATE_LIMITS: Readonly<Record<Operation, number>> = {
  runsync: 2000,
  run: 1000,
  status: 2000,
  stream: 2000,
  cancel: 100,
  retry: 1000,
  'purge-queue': 2,
  health: 2000,
  // RunPod's `/requests` limit: 10 per 10 s.
  requests: 10,
  // Batch Jobs (/batch...): one call adds up to 10,000 requests.
  batch: 100,
  openai: 2000,
  // Load-balancing endpoints: any request to /v2/<ep>/lb/<path>.
  lb: 2000,
};

/** Default per-worker allowance: each running worker of an endpoint adds this many requests per window. */
export const DEFAULT_PER_WORKER = 50;

/**
 * `rateLimits` of `createServer`: an object (a boolean is refused; `{ enabled: false }` turns limits off).
 *
 * @example
 * createServer({ rateLimits: { base: { run: 5000 }, perWorker: 100 } }); // merged over the defaults
 * createServer({ rateLimits: { enabled: false } }); // off
 */
export interface RateLimitOptions {
  /** `false` turns rate limiting off (local benchmarks). CLI: `BERTH_RATE_LIMITS=off`. Default: `true`. */
  enabled?: boolean;
  /** Base limit per operation per 10 s window, merged over `DEFAULT_RATE_LIMITS`. */
  base?: Partial<Record<Operation, number>>;
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

/** Applies the defaults; a bad value throws `ConfigError` (code `invalid_request`) naming the option. */
export function resolveRateLimits(o: RateLimitOptions | undefined): ResolvedRateLimits {
  const opts: RateLimitOptions = o ?? {};
  if (typeof opts === 'boolean') {
    // The boolean form (before 0.2) had the same meaning as `enabled`: say what to write instead.
    throw new ConfigError(
      `option rateLimits must be an object: write rateLimits: { enabled: ${String(opts)} } (got ${String(opts)})`,
    );
  }
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts))
    throw new ConfigError(
      `option rateLimits must be an object such as { base: { run: 5000 }, perWorker: 100 } (got ${describeValue(opts)})`,
    );
  if (opts.enabled !== undefined && typeof opts.enabled !== 'boolean')
    throw new ConfigError(`option rateLimits.enabled must be true or false (got ${describeValue(opts.enabled)})`);
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
