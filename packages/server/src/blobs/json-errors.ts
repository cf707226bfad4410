import type { ErrorCode } from '@berth/protocol';

/**
 * A bad body as the checker finds it: a code of the protocol's error table, the message, `details`. Not a
 * `BerthError` because this module and the checker import nothing of `@berth/protocol` at run time: its root (zod
 * schemas) took a pool thread 0.65 of its 0.85 s start under load. The callers turn it into a `BerthError`
 * (`toBerthError` in `parseJsonBody`; the ingest pool across the thread boundary).
 */
export class JsonCheckError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'JsonCheckError';
  }
}

/**
 * The errors of a JSON body, one place for every checker of request bodies and worker results (`json-check.ts`,
 * `http/body.ts`): the same code and message whether the body was checked whole, streamed or on a thread.
 */
export const jsonErrors = {
  notUtf8: () => new JsonCheckError('invalid_json', 'request body is not valid UTF-8'),
  empty: () => new JsonCheckError('invalid_json', 'request body is empty; send a JSON object like {"input": {...}}'),
  tooDeep: (max: number) => new JsonCheckError('invalid_json', `JSON nested deeper than ${max} levels`),
  syntax: (what: string) => new JsonCheckError('invalid_json', `request body is not valid JSON: ${what}`),
  /** `at`: the dotted path of the number (`input.list[2]`), '' for the body itself. */
  nonFinite: (at: string) =>
    new JsonCheckError(
      'invalid_request',
      `${at || 'the body'}: number out of range (JSON numbers must fit a 64-bit float, like 1.7e308 at most)`,
      { field: at },
    ),
  notObject: () => new JsonCheckError('invalid_request', 'request body must be a JSON object like {"input": {...}}'),
  /** The top-level fields other than the big one (`input`) passed `limit` bytes; `field`: where it happened. */
  otherFieldsTooLarge: (key: string, field: string, limit: number) =>
    new JsonCheckError(
      'payload_too_large',
      `the body's fields other than "${key}" exceed ${limit} bytes in all (at "${field}"); send large data inside "${key}"`,
      { field, limit },
    ),
};

/** What a syntax error names: the byte found (a printable character quoted, else its hex) or the end. */
export function unexpected(byte: number | undefined, offset: number): string {
  if (byte === undefined) return 'unexpected end of JSON input';
  const shown =
    byte > 32 && byte < 127 ? `'${String.fromCharCode(byte)}'` : `byte 0x${byte.toString(16).padStart(2, '0')}`;
  return `unexpected ${shown} at byte ${offset}`;
}
