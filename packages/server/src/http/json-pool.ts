import { BerthError, type ErrorCode } from '@berth/protocol';
import { checkOnPool } from '../blobs/ingest-pool.js';

/**
 * Big JSON (a request body or a worker frame of `BIG_JSON_BYTES` or more) is checked and parsed on the ingest
 * pool's threads (`blobs/ingest-pool.ts`), not on the event loop (issue #31: a 19 MB body took 60-100 ms of
 * decode, parse and scan, and ten at once stalled every other request that long each). The thread runs the one
 * JSON checker (`blobs/json-check.ts`: UTF-8, syntax, depth, non-finite numbers, the errors of `parseJsonBody`)
 * and answers the value with one top-level key (`input`, `output`) left out, plus the byte range of that key's
 * value in the original bytes: the caller keeps those bytes as a `RawJson`.
 */
export const BIG_JSON_BYTES = 1024 * 1024;

/** What a thread answers. */
export type PoolResult =
  | { ok: true; value: unknown; span?: [number, number] }
  | { ok: false; code: ErrorCode; message: string; field?: string };

/**
 * Parses `bytes` (JSON) on a pool thread. With `key`, a top-level object's value under `key` is left out of the
 * answer and its byte range returned instead (`span`), when it is there; a body that is not an object answers
 * 400 `invalid_request` (what a submit answers for one).
 */
export async function parseOffThread(bytes: Uint8Array, key: string): Promise<PoolResult> {
  try {
    // No cap on the other fields here: a worker's big `job.stream` frame holds its bulk outside `output`.
    const r = await checkOnPool(bytes, { key, maxOtherBytes: Number.POSITIVE_INFINITY, hash: false });
    return r.span ? { ok: true, value: r.fields, span: r.span } : { ok: true, value: r.fields };
  } catch (err) {
    if (!(err instanceof BerthError)) throw err;
    const field = (err.details as { field?: unknown } | undefined)?.field;
    return typeof field === 'string'
      ? { ok: false, code: err.code, message: err.message, field }
      : { ok: false, code: err.code, message: err.message };
  }
}
