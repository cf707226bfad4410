import { BerthError, LIMITS } from '@berth/protocol';
import type { ApiRequest } from '../http/types.js';
import type { BlobFiles } from './blob-files.js';
import { startIngest, type IngestResult } from './ingest-pool.js';

/**
 * Bodies up to this size are read into memory and parsed on the event loop as before; bigger ones stream into a
 * blob file, checked off the main thread as they arrive (issue #35). Measured on this machine: a 256 KiB body
 * parses in about 1 ms on the event loop, past which the stall grows with the size.
 */
export const BLOB_BODY_BYTES = LIMITS.blobValueBytes;

/** A body streamed into a temp blob file: its check's result and the file (to keep, or to discard). */
export interface IngestedBody {
  result: IngestResult;
  temp: { path: string; name: string };
}

/** What a body became: small bytes to parse here, or a checked temp blob file. */
export type ReceivedBody = { small: Buffer } | { big: IngestedBody };

const tooLarge = (limit: number) =>
  new BerthError('payload_too_large', `request body exceeds the limit of ${limit} bytes`, { limit });

/**
 * Reads a request body counting bytes as they arrive (413 `payload_too_large` past `limit`, the rest never read).
 * Past `BLOB_BODY_BYTES` the bytes go to a temp file in `files` while a pool thread checks the JSON (`key`: the
 * top-level field to find the byte range of, the others parsed and capped at 64 KiB in all: the checker's `MAX_OTHER_BYTES`); each piece
 * is given back to the in-memory budget once written (`req.release`), so memory holds a piece, not the body.
 */
export async function receiveBody(
  req: ApiRequest,
  limit: number,
  files: BlobFiles,
  key: string | undefined,
): Promise<ReceivedBody> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) throw tooLarge(limit);
  const body = req.body;
  if (body === undefined) return { small: Buffer.alloc(0) };
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const buf = Buffer.from(body);
    if (buf.length > limit) throw tooLarge(limit);
    if (buf.length <= BLOB_BODY_BYTES) return { small: buf };
    return { big: await ingest([buf], undefined, buf.length, limit, files, key, req) };
  }
  const it = body[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let size = 0;
  try {
    for (;;) {
      const next = await it.next();
      if (next.done) return { small: Buffer.concat(head, size) };
      const c = next.value;
      size += c.length;
      if (size > limit) throw tooLarge(limit);
      head.push(Buffer.from(c.buffer, c.byteOffset, c.length));
      if (size > BLOB_BODY_BYTES) break;
    }
  } catch (err) {
    await it.return?.();
    throw err;
  }
  const reserve = Number.isSafeInteger(declared) && declared >= size ? declared : limit;
  return { big: await ingest(head, it, reserve, limit, files, key, req) };
}

async function ingest(
  head: Buffer[],
  rest: AsyncIterator<Uint8Array> | undefined,
  reserve: number,
  limit: number,
  files: BlobFiles,
  key: string | undefined,
  req: ApiRequest,
): Promise<IngestedBody> {
  let temp: { path: string; name: string };
  try {
    temp = files.reserve(reserve);
  } catch (err) {
    await rest?.return?.();
    throw err;
  }
  const job = startIngest(temp.path, {
    ...(key === undefined ? {} : { key }),
    maxDepth: LIMITS.jsonMaxDepth,
    fsync: files.fsync,
  });
  let size = 0;
  const put = async (c: Uint8Array) => {
    size += c.length;
    if (size > limit) throw tooLarge(limit);
    await job.write(c);
    req.release?.(c.length);
  };
  try {
    for (const c of head) await put(c);
    head.length = 0;
    if (rest)
      for (;;) {
        const next = await rest.next();
        if (next.done) break;
        await put(next.value);
      }
    return { result: await job.end(), temp };
  } catch (err) {
    await rest?.return?.();
    await job.abort().catch(() => undefined);
    await files.discard(temp.name);
    throw err;
  }
}
