import { BerthError, LIMITS } from '@berth/protocol';
import { RawJson } from '../jobs/raw-json.js';
import { BIG_JSON_BYTES, parseOffThread } from './json-pool.js';

/**
 * Reads a request body, counting bytes as they arrive: past `limit` it stops with 413 `payload_too_large`
 * without buffering the rest (a lying or absent Content-Length changes nothing).
 */
export async function readBody(
  body: AsyncIterable<Uint8Array> | Uint8Array | string | undefined,
  limit: number,
  declaredLength?: string,
): Promise<Buffer> {
  const tooLarge = () =>
    new BerthError('payload_too_large', `request body exceeds the limit of ${limit} bytes`, { limit });
  if (declaredLength !== undefined && Number(declaredLength) > limit) throw tooLarge();
  if (body === undefined) return Buffer.alloc(0);
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const buf = Buffer.from(body);
    if (buf.length > limit) throw tooLarge();
    return buf;
  }
  // With a declared length, chunks are copied into one buffer as they arrive (each is garbage at once) instead of
  // being kept until a final concat: one copy of the body in memory, not two.
  const declared = declaredLength === undefined ? NaN : Number(declaredLength);
  const whole = Number.isSafeInteger(declared) && declared > 0 ? Buffer.allocUnsafe(declared) : undefined;
  const parts: Buffer[] = [];
  let size = 0;
  let filled = 0; // bytes of `whole` in use (the rest, if the body outgrows its declared length, goes to parts)
  for await (const chunk of body) {
    if (size + chunk.length > limit) throw tooLarge();
    if (whole && parts.length === 0 && filled + chunk.length <= whole.length) {
      whole.set(chunk, filled);
      filled += chunk.length;
    } else parts.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
    size += chunk.length;
  }
  if (!whole) return Buffer.concat(parts, size);
  if (parts.length === 0) return whole.subarray(0, filled);
  return Buffer.concat([whole.subarray(0, filled), ...parts], size);
}

/**
 * One pass over JSON text outside its strings: whether it nests deeper than `max` (stopping early), and whether
 * it may hold a number too big for a float (a 3-digit exponent, or 309 digits in a row). Strings are skipped with
 * `indexOf` (native, no per-character loop): a 19 MB base64 string took 19 million iterations of the loop before.
 */
export function scanJson(text: string, max: number): { tooDeep: boolean; hugeNumber: boolean } {
  let depth = 0;
  let digits = 0; // digits in a row outside strings
  let hugeNumber = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // To the closing quote: the next quote not escaped by an odd run of backslashes.
      for (;;) {
        const q = text.indexOf('"', i + 1);
        if (q < 0) return { tooDeep: false, hugeNumber }; // unterminated: JSON.parse reports it
        let k = q - 1;
        while (k > i && text.charCodeAt(k) === 92 /* \ */) k--;
        i = q;
        if ((q - 1 - k) % 2 === 0) break;
      }
      digits = 0;
      continue;
    }
    if (c >= 48 && c <= 57) {
      if (++digits >= 309) hugeNumber = true;
      continue;
    }
    digits = 0;
    if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) return { tooDeep: true, hugeNumber };
    } else if (c === 125 || c === 93) depth--;
    else if ((c === 101 || c === 69) /* e E */ && !hugeNumber) {
      let j = i + 1;
      if (text.charCodeAt(j) === 43 /* + */) j++;
      const d = (at: number) => text.charCodeAt(at) >= 48 && text.charCodeAt(at) <= 57;
      if (d(j) && d(j + 1) && d(j + 2)) hugeNumber = true;
    }
  }
  return { tooDeep: false, hugeNumber };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses a JSON body: valid UTF-8, at most `LIMITS.jsonMaxDepth` deep. `__proto__` keys stay plain own data
 * properties (JSON.parse defines them, it never sets a prototype) and the server never merges request objects
 * into others, so they cannot pollute anything; they reach the worker as the user sent them.
 */
export function parseJsonBody(buf: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(buf);
  } catch {
    throw new BerthError('invalid_json', 'request body is not valid UTF-8');
  }
  if (text.trim() === '')
    throw new BerthError('invalid_json', 'request body is empty; send a JSON object like {"input": {...}}');
  const scan = scanJson(text, LIMITS.jsonMaxDepth);
  if (scan.tooDeep) throw new BerthError('invalid_json', `JSON nested deeper than ${LIMITS.jsonMaxDepth} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new BerthError('invalid_json', `request body is not valid JSON: ${(err as Error).message}`, undefined, {
      cause: err,
    });
  }
  // JSON.parse turns 1e999 into Infinity, which JSON.stringify then writes as null: refuse it instead of
  // changing the value. Only bodies with a 3-digit exponent or 309+ digits in a row can hold one: look then.
  if (scan.hugeNumber) {
    const at = nonFinitePath(value, '');
    if (at !== undefined)
      throw new BerthError(
        'invalid_request',
        `${at || 'the body'}: number out of range (JSON numbers must fit a 64-bit float, like 1.7e308 at most)`,
        { field: at },
      );
  }
  return value;
}

/** The dotted path (`input.a`, `input.list[2]`) of the first non-finite number in a parsed JSON value. */
function nonFinitePath(v: unknown, path: string): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : path;
  if (v === null || typeof v !== 'object') return undefined;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const at = nonFinitePath(v[i], `${path}[${i}]`);
      if (at !== undefined) return at;
    }
    return undefined;
  }
  for (const [k, x] of Object.entries(v)) {
    const at = nonFinitePath(x, path === '' ? k : `${path}.${k}`);
    if (at !== undefined) return at;
  }
  return undefined;
}

/**
 * `parseJsonBody` for a body whose top-level `key` (`input`) may be big: from `BIG_JSON_BYTES` on, the body is
 * parsed and checked on a pool thread (`json-pool.ts`) and the value under `key` comes back as the bytes it was
 * sent as (`raw`), left out of `value`; smaller bodies are parsed here as before (`raw` undefined).
 */
export async function parseBigJsonBody(buf: Buffer, key: string): Promise<{ value: unknown; raw?: RawJson }> {
  if (buf.length < BIG_JSON_BYTES) return { value: parseJsonBody(buf) };
  const r = await parseOffThread(buf, key);
  if (!r.ok) throw new BerthError(r.code, r.message, r.field === undefined ? undefined : { field: r.field });
  return r.span ? { value: r.value, raw: new RawJson(buf.subarray(r.span[0], r.span[1])) } : { value: r.value };
}
