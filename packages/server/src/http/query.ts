import { BerthError, type ErrorCode } from '@berth/protocol';

/** An optional whole-number query parameter within [min, max]; anything else is a 400 with `code`. */
export function intParam(
  query: URLSearchParams,
  name: string,
  min: number,
  max: number,
  code: ErrorCode,
): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  if (!/^\d{1,15}$/.test(raw))
    throw new BerthError(code, `query ${name} must be a whole number of milliseconds, got "${raw.slice(0, 40)}"`);
  const v = Number(raw);
  if (v < min || v > max) throw new BerthError(code, `query ${name} must be between ${min} and ${max} ms, got ${v}`);
  return v;
}
