import { BerthError } from '@berth/protocol';

/**
 * The errors of a JSON body, one place for every checker of request bodies and worker results (`json-check.ts`,
 * `http/body.ts`): the same code and message whether the body was checked whole, streamed or on a thread.
 */
export const jsonErrors = {
  notUtf8: () => new BerthError('invalid_json', 'request body is not valid UTF-8'),
  empty: () => new BerthError('invalid_json', 'request body is empty; send a JSON object like {"input": {...}}'),
  tooDeep: (max: number) => new BerthError('invalid_json', `JSON nested deeper than ${max} levels`),
  syntax: (what: string) => new BerthError('invalid_json', `request body is not valid JSON: ${what}`),
  /** `at`: the dotted path of the number (`input.list[2]`), '' for the body itself. */
  nonFinite: (at: string) =>
    new BerthError(
      'invalid_request',
      `${at || 'the body'}: number out of range (JSON numbers must fit a 64-bit float, like 1.7e308 at most)`,
      { field: at },
    ),
  notObject: () => new BerthError('invalid_request', 'request body must be a JSON object like {"input": {...}}'),
  /** The top-level fields other than the big one (`input`) passed `limit` bytes; `field`: where it happened. */
  otherFieldsTooLarge: (key: string, field: string, limit: number) =>
    new BerthError(
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
