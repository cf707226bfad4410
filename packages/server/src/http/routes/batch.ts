import { BerthError, LIMITS } from '@berth/protocol';
import { batchName, readBatchBody } from '../../batches/batch-body.js';
import type { BatchService } from '../../batches/batch-service.js';
import { toBatchRequest } from '../../batches/batch-view.js';
import { parseJsonBody, readBody } from '../body.js';
import type { ApiRequest, ApiResponse } from '../types.js';
import { pageCursor, readPageCursor } from './page-cursor.js';

/** What a batch route gets: the request, its endpoint, the path's batch and request ids, the batch service. */
export interface BatchCall {
  req: ApiRequest;
  endpointId: string;
  /** `<id>` of `/batch/<id>...` (undefined on `/batch`). */
  batchId?: string | undefined;
  /** `<requestId>` of `/batch/<id>/requests/<requestId>`. */
  requestId?: string | undefined;
  batches: BatchService;
}

const PAGE_DEFAULT = 100;
const PAGE_MAX = 1000;
const LIST_DEFAULT = 20;
const LIST_MAX = 100;

const ok = (json: unknown): ApiResponse => ({ status: 200, json });

function idOf(c: BatchCall): string {
  if (!c.batchId) throw new BerthError('route_not_found', `no route ${c.req.method} ${c.req.path}`);
  return c.batchId;
}

/** `?limit=` between 1 and `max` (default `def`). */
function limitOf(q: URLSearchParams, def: number, max: number): number {
  const raw = q.get('limit');
  if (raw === null || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw new BerthError(
      'invalid_limit',
      `limit must be an integer from 1 to ${max} (got ${JSON.stringify(raw.slice(0, 20))})`,
    );
  return n;
}

const body = async (req: ApiRequest) => readBody(req.body, LIMITS.runBodyBytes, req.headers['content-length']);

/** `POST /v2/<ep>/batch`: a new DRAFT batch, with the requests of the body (an array, `{requests}`, or JSON lines). */
export async function createBatch(c: BatchCall): Promise<ApiResponse> {
  const b = readBatchBody(await body(c.req), c.req.headers['content-type'], c.batches.maxPerCall, true);
  return ok(await c.batches.create(c.endpointId, b));
}

/** `POST /v2/<ep>/batch/<id>/requests`: more requests, while DRAFT. */
export async function addToBatch(c: BatchCall): Promise<ApiResponse> {
  const id = idOf(c);
  const b = readBatchBody(await body(c.req), c.req.headers['content-type'], c.batches.maxPerCall, false);
  return ok(await c.batches.add(c.endpointId, id, b.requests));
}

/** `DELETE /v2/<ep>/batch/<id>/requests/<requestId>`: one request less, while DRAFT. */
export async function removeFromBatch(c: BatchCall): Promise<ApiResponse> {
  if (!c.requestId) throw new BerthError('route_not_found', `no route ${c.req.method} ${c.req.path}`);
  return ok(await c.batches.remove(c.endpointId, idOf(c), c.requestId));
}

/** `PUT /v2/<ep>/batch/<id>` with `{"name": "..."}` (null clears it). */
export async function updateBatch(c: BatchCall): Promise<ApiResponse> {
  const id = idOf(c);
  const raw = await body(c.req);
  const o = raw.length === 0 ? {} : parseJsonBody(raw);
  if (o === null || typeof o !== 'object' || Array.isArray(o))
    throw new BerthError('invalid_request', 'the body must be a JSON object like {"name": "nightly"}');
  if (!('name' in o)) throw new BerthError('invalid_request', 'name: missing (the one attribute a batch update sets)');
  return ok(await c.batches.rename(c.endpointId, id, batchName((o as { name: unknown }).name)));
}

export async function finalizeBatch(c: BatchCall): Promise<ApiResponse> {
  return ok(await c.batches.finalize(c.endpointId, idOf(c)));
}

export async function cancelBatch(c: BatchCall): Promise<ApiResponse> {
  return ok(await c.batches.cancel(c.endpointId, idOf(c)));
}

/** `GET /v2/<ep>/batch/<id>`: the summary with its counts. */
export async function getBatch(c: BatchCall): Promise<ApiResponse> {
  return ok(await c.batches.summary(await c.batches.batch(c.endpointId, idOf(c))));
}

/** `GET /v2/<ep>/batch[?limit=][&cursor=]`: the endpoint's batches, newest first, with their counts. */
export async function listBatches(c: BatchCall): Promise<ApiResponse> {
  const q = c.req.query;
  const limit = limitOf(q, LIST_DEFAULT, LIST_MAX);
  const { batches, more } = await c.batches.list(c.endpointId, limit, readPageCursor(q.get('cursor'), '/batch'));
  return ok({ batches, nextCursor: more ? pageCursor(more) : null });
}

/**
 * `GET /v2/<ep>/batch/<id>/requests[?limit=][&cursor=|&offset=]`: the batch's requests in id order. `nextCursor`
 * (also read as `?nextCursor=`) gives every request exactly once across pages; `offset` (RunPod's newest page) is
 * accepted too. Answers RunPod's `hasMore`, `total`, `limit` (and `offset`) beside Berth's `nextCursor`.
 */
export async function batchRequests(c: BatchCall): Promise<ApiResponse> {
  const q = c.req.query;
  const limit = limitOf(q, PAGE_DEFAULT, PAGE_MAX);
  const rawCursor = q.get('cursor') ?? q.get('nextCursor');
  let after: string | undefined;
  if (rawCursor !== null && rawCursor !== '') {
    after = Buffer.from(rawCursor, 'base64url').toString('utf8');
    if (after === '' || after.length > 200)
      throw new BerthError('invalid_request', 'cursor must be the nextCursor of a previous page');
  }
  const rawOffset = q.get('offset');
  const offset = rawOffset === null || rawOffset === '' ? 0 : Number(rawOffset);
  if (!Number.isSafeInteger(offset) || offset < 0)
    throw new BerthError('invalid_request', 'offset must be a whole number of requests to skip');
  const { batch, page, more } = await c.batches.requests(c.endpointId, idOf(c), limit, after, offset);
  const last = page.at(-1);
  return ok({
    requests: page.map(toBatchRequest),
    nextCursor: more && last ? Buffer.from(last.id).toString('base64url') : null,
    hasMore: more,
    total: batch.total,
    limit,
    offset,
  });
}
