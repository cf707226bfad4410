import { BerthError, LIMITS, type ErrorCode } from '@berth/protocol';

/**
 * A whole-number query parameter of the queue API: the route reads it with `intParam` and the OpenAPI document
 * shows its bounds and default from the same object, so the two cannot differ.
 */
export interface IntQuery {
  name: string;
  min: number;
  max: number;
  /** Applied when the parameter is absent; none: the route does without it. */
  default?: number;
  /** Milliseconds, or a plain count. */
  unit: 'ms' | 's' | 'count';
  /** Code of the 400 a bad value gets. */
  code: ErrorCode;
  description: string;
}

/** The query parameters of the queue API (docs/api.md). */
export const QUERY = {
  runsyncWait: {
    name: 'wait',
    min: LIMITS.waitMin,
    max: LIMITS.waitMax,
    default: LIMITS.waitDefault,
    unit: 'ms',
    code: 'invalid_wait',
    description: 'Wait up to this many ms for the job to end',
  },
  statusWait: {
    name: 'wait',
    min: LIMITS.waitMin,
    max: LIMITS.waitMax,
    default: LIMITS.waitDefault,
    unit: 'ms',
    code: 'invalid_wait',
    description: 'Long-poll up to this many ms until the job is terminal',
  },
  streamWait: {
    name: 'wait',
    min: 0,
    max: LIMITS.waitMax,
    default: LIMITS.streamWaitDefault,
    unit: 'ms',
    code: 'invalid_wait',
    description: 'Long-poll up to this many ms for at least one chunk or the end',
  },
  ttl: {
    name: 'ttl',
    min: LIMITS.ttlMin,
    max: LIMITS.ttlMax,
    unit: 'ms',
    code: 'invalid_ttl',
    description: "Sets the job's remaining lifespan to this many ms from now",
  },
  jobsLimit: {
    name: 'limit',
    min: 1,
    max: 500,
    default: 50,
    unit: 'count',
    code: 'invalid_limit',
    description: 'How many jobs, newest first',
  },
  monitorWindow: {
    name: 'window',
    min: 60,
    max: 3600,
    default: 900,
    unit: 's',
    code: 'invalid_request',
    description: 'Seconds of history, in 5 s slots',
  },
} as const satisfies Record<string, IntQuery>;

/** The value of `spec` in `query` (its default when absent); a value out of bounds is a 400 with `spec.code`. */
export function intParam<Q extends IntQuery>(
  query: URLSearchParams,
  spec: Q,
): Q extends { default: number } ? number : number | undefined;
export function intParam(query: URLSearchParams, spec: IntQuery): number | undefined {
  const { name, min, max } = spec;
  const raw = query.get(name);
  if (raw === null) return spec.default;
  const v = /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (spec.unit === 'count') {
    if (!(v >= min && v <= max))
      throw new BerthError(
        spec.code,
        `query ${name} must be a whole number from ${min} to ${max}, got "${raw.slice(0, 40)}"`,
      );
    return v;
  }
  if (Number.isNaN(v))
    throw new BerthError(spec.code, `query ${name} must be a whole number of milliseconds, got "${raw.slice(0, 40)}"`);
  if (v < min || v > max)
    throw new BerthError(spec.code, `query ${name} must be between ${min} and ${max} ms, got ${v}`);
  return v;
}
