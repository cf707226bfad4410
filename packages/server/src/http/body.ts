import { BerthError, LIMITS } from '@berth/protocol';
import { JsonChecker } from '../blobs/json-check.js';
import { JsonCheckError } from '../blobs/json-errors.js';

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

const BOM = [0xef, 0xbb, 0xbf];

/**
 * Parses a JSON body: valid UTF-8, at most `LIMITS.jsonMaxDepth` deep, no number too big for a float (JSON.parse
 * would make it Infinity, which JSON.stringify then writes as null: refused instead of changing the value). The
 * checks and their errors are the streaming checker's (`blobs/json-check.ts`, the one place for them); JSON.parse
 * then only builds the value. `__proto__` keys stay plain own data properties (JSON.parse defines them, it never
 * sets a prototype) and the server never merges request objects into others, so they cannot pollute anything;
 * they reach the worker as the user sent them.
 */
export function parseJsonBody(buf: Buffer): unknown {
  const checker = new JsonChecker({ maxDepth: LIMITS.jsonMaxDepth, hash: false });
  try {
    checker.push(buf);
    checker.end();
  } catch (err) {
    if (err instanceof JsonCheckError) throw new BerthError(err.code, err.message, err.details);
    throw err;
  }
  const bom = buf[0] === BOM[0] && buf[1] === BOM[1] && buf[2] === BOM[2] ? 3 : 0; // TextDecoder drops it too
  return JSON.parse(buf.toString('utf8', bom));
}
