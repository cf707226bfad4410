import { UnrecoverableError } from '../../errors.js';
import { NotSerializableError } from './json-value.js';

/** Longest error string sent to the control plane; the rest is cut. */
const MAX_ERROR_LENGTH = 16 * 1024;

/**
 * Turns anything a handler throws into the job's `error` string: an Error gives its message (prefixed with its
 * name for built-in kinds such as `TypeError`), a string stays as it is, anything else is JSON-stringified.
 *
 * @example errorMessage(new TypeError('x is undefined')) // 'TypeError: x is undefined'
 */
export function errorMessage(err: unknown): string {
  return clip(describe(err));
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const name = err.name || 'Error';
    if (!err.message) return name;
    if (name === 'Error' || err instanceof UnrecoverableError || err instanceof NotSerializableError)
      return err.message;
    return `${name}: ${err.message}`;
  }
  if (typeof err === 'string') return err;
  try {
    const json = JSON.stringify(err);
    if (json !== undefined) return json;
  } catch {
    // fall through: circular or BigInt
  }
  return String(err);
}

function clip(s: string): string {
  return s.length > MAX_ERROR_LENGTH ? `${s.slice(0, MAX_ERROR_LENGTH)}... (cut)` : s;
}
