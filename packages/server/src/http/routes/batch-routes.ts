import { BerthError } from '@berth/protocol';
import type { ApiDeps } from '../api-deps.js';
import type { EndpointRoute, Method, RouteCall, RouteDoc } from '../route-types.js';
import type { ApiResponse } from '../types.js';
import {
  addToBatch,
  batchRequests,
  cancelBatch,
  createBatch,
  finalizeBatch,
  getBatch,
  listBatches,
  removeFromBatch,
  updateBatch,
  type BatchCall,
} from './batch.js';

const CURSOR = { name: 'cursor', type: 'string', description: 'The nextCursor of the previous page' } as const;
const LIMIT = (max: number, def: number) =>
  ({ name: 'limit', type: 'integer', description: `Page size, 1 to ${max} (default ${def})` }) as const;

/** A Batch Jobs route (`/v2/<ep>/<path>`): operation `batch`, endpoints only (not public model slugs). */
function batch(
  path: string,
  method: Method,
  handler: (c: BatchCall) => Promise<ApiResponse>,
  doc: Omit<RouteDoc, 'endpointsOnly'>,
): EndpointRoute {
  return {
    kind: 'endpoint',
    auth: 'key',
    path: `/v2/:ep/${path}`,
    methods: [method],
    operation: 'batch',
    // The GETs are reads: a read-only key may list and page batches (the rate limit is still `batch`'s).
    ...(method === 'GET' ? { read: true as const } : {}),
    model: 'direct',
    when: (d) => d.batches !== undefined,
    serve: (rc: RouteCall, d: ApiDeps) => {
      if (rc.model)
        throw new BerthError('route_not_found', `no route ${rc.req.method} ${rc.req.path}: batches are for endpoints`);
      return handler({
        req: rc.req,
        endpointId: rc.endpointId,
        batchId: rc.params['batch_id'],
        requestId: rc.params['request_id'],
        batches: d.batches!,
      });
    },
    doc: { ...doc, endpointsOnly: true },
  };
}

/**
 * RunPod's Batch Jobs routes (docs/api.md#batch-jobs), each one method: entries of the route table
 * (`route-table.ts`). Paths sharing a shape with several methods are several entries.
 */
export const BATCH_ROUTES: readonly EndpointRoute[] = [
  batch('batch', 'POST', createBatch, {
    id: 'createBatch',
    summary:
      'Create a DRAFT batch, optionally with its first requests (an array of /run bodies, {requests}, or JSON lines)',
    body: 'object',
    reply: 'object',
  }),
  batch('batch', 'GET', listBatches, {
    id: 'listBatches',
    summary: "The endpoint's batches, newest first, with their counts",
    query: [LIMIT(100, 20), CURSOR],
    reply: 'object',
  }),
  batch('batch/:batch_id', 'GET', getBatch, {
    id: 'getBatch',
    summary: 'A batch with its counts and progress',
    reply: 'object',
  }),
  batch('batch/:batch_id', 'PUT', updateBatch, {
    id: 'updateBatch',
    summary: 'Rename a batch ({"name": ...})',
    body: 'object',
    reply: 'object',
  }),
  batch('batch/:batch_id/requests', 'POST', addToBatch, {
    id: 'addToBatch',
    summary: 'Add requests to a DRAFT batch (an array, {requests}, or JSON lines; at most 10,000 a call)',
    body: 'object',
    reply: 'object',
  }),
  batch('batch/:batch_id/requests', 'GET', batchRequests, {
    id: 'batchRequests',
    summary: "The batch's requests with their results, a page at a time (every request once across pages)",
    query: [LIMIT(1000, 100), CURSOR, { name: 'offset', type: 'integer', description: 'Requests to skip (RunPod)' }],
    reply: 'object',
  }),
  batch('batch/:batch_id/requests/:request_id', 'DELETE', removeFromBatch, {
    id: 'removeFromBatch',
    summary: 'Remove a request from a DRAFT batch',
    reply: 'object',
  }),
  batch('batch/:batch_id/finalize', 'POST', finalizeBatch, {
    id: 'finalizeBatch',
    summary: 'Lock a DRAFT batch and queue its requests (behind every /run job)',
    reply: 'object',
  }),
  batch('batch/:batch_id/cancel', 'POST', cancelBatch, {
    id: 'cancelBatch',
    summary: 'Cancel a batch: queued requests at once, running ones get their cancel',
    reply: 'object',
  }),
];
