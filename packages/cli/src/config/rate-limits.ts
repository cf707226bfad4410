import { ConfigError, resolveServerOptions, silentLogger, type RateLimitOptions } from '@berth/server';
import { RATE_LIMIT_FIELDS as FIELDS } from './resolve.js';

/**
 * What is wrong with a `rateLimits` object, by the server's own rules (the object `createServer` takes: an unknown
 * operation, a negative or fractional limit), worded for a config file or a variable; undefined when it is good.
 *
 * @example rateLimitsProblem({ base: { runn: 5 } }) // 'rateLimits.base: unknown operation "runn" (known: runsync, ...)'
 */
export function rateLimitsProblem(value: RateLimitOptions): string | undefined {
  // The server ignores fields it does not know; a typo ("perworker") must not pass silently.
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const unknown = Object.keys(value).filter((k) => !FIELDS.includes(k));
    if (unknown.length > 0)
      return `rateLimits: unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')} (known: ${FIELDS.join(', ')})`;
  }
  try {
    resolveServerOptions({ rateLimits: value, logger: silentLogger });
    return undefined;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.message.replace(/^option /, '');
  }
}

/**
 * The rate limits `berth dev` / `berth serve` run with: the config file's `rateLimits`, then `BERTH_RATE_LIMITS`
 * over it (`base` merged operation by operation, `enabled` and `perWorker` replaced). Default on, the server's
 * limits.
 *
 * @example mergeRateLimits({ base: { run: 5000 } }, { enabled: false }) // { enabled: false, base: { run: 5000 } }
 */
export function mergeRateLimits(
  file: RateLimitOptions | undefined,
  env: RateLimitOptions | undefined,
): RateLimitOptions & { enabled: boolean } {
  const base = file?.base || env?.base ? { ...file?.base, ...env?.base } : undefined;
  const perWorker = env?.perWorker ?? file?.perWorker;
  return {
    enabled: env?.enabled ?? file?.enabled ?? true,
    ...(base ? { base } : {}),
    ...(perWorker !== undefined ? { perWorker } : {}),
  };
}
