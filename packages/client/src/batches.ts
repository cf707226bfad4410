import type { BatchSummary, BatchStatus as WireBatchStatus } from '@berth/protocol';
import { type CallOptions, type Transport, callJson } from './transport.js';
import type { Job, JobPolicy } from './types.js';

/** A batch's state (RunPod's newest names; docs/api.md#batch-jobs). */
export type BatchStatus = WireBatchStatus;

/** A batch with its counts (`GET /v2/<ep>/batch/<id>`): the six `request*` counts add up to `requestTotal`. */
export type Batch = BatchSummary;

/** The answer of a create or an add: the batch, and the ids of the requests just added (in order). */
export interface BatchAdded extends Batch {
  requestIds: string[];
}

/** One request of a batch: a `/run` body without a webhook (the batch has it). */
export interface BatchRequest<I = Record<string, unknown>> {
  input: I;
  policy?: JobPolicy;
  s3Config?: Record<string, unknown>;
}

/** A request of a batch page: the job object with RunPod's ISO times. */
export type BatchJob<O = unknown> = Job<O> & { createdAt: string; startedAt?: string; completedAt?: string };

/** A page of `GET /v2/<ep>/batch/<id>/requests`. */
export interface BatchPage<O = unknown> {
  requests: BatchJob<O>[];
  /** Pass as `cursor` for the next page; null on the last. */
  nextCursor: string | null;
  hasMore: boolean;
  total: number;
}

interface Signal {
  signal?: AbortSignal;
}

/** The Batch Jobs calls of one endpoint (`client.endpoint(id).batches`). */
export interface Batches<I = Record<string, unknown>, O = unknown> {
  /** POST `/batch`: a new DRAFT batch, with its first requests (at most 10,000 a call). */
  create(requests?: BatchRequest<I>[], o?: { name?: string; webhook?: string } & Signal): Promise<BatchAdded>;
  /** POST `/batch/<id>/requests`: more requests, while DRAFT. */
  add(batchId: string, requests: BatchRequest<I>[], o?: Signal): Promise<BatchAdded>;
  /** DELETE `/batch/<id>/requests/<requestId>`: one request less, while DRAFT. */
  remove(batchId: string, requestId: string, o?: Signal): Promise<Batch>;
  /** PUT `/batch/<id>`: a new name (null clears it). */
  rename(batchId: string, name: string | null, o?: Signal): Promise<Batch>;
  /** POST `/batch/<id>/finalize`: locks the batch and queues its requests. */
  finalize(batchId: string, o?: Signal): Promise<Batch>;
  /** POST `/batch/<id>/cancel`: queued requests cancelled, running ones stopped. */
  cancel(batchId: string, o?: Signal): Promise<Batch>;
  /** GET `/batch/<id>`: the batch and its counts. */
  get(batchId: string, o?: Signal): Promise<Batch>;
  /** GET `/batch`: the endpoint's batches, newest first. */
  list(o?: { limit?: number; cursor?: string } & Signal): Promise<{ batches: Batch[]; nextCursor: string | null }>;
  /** GET `/batch/<id>/requests`: one page of requests with their results. */
  page(batchId: string, o?: { limit?: number; cursor?: string } & Signal): Promise<BatchPage<O>>;
  /** Every request of the batch, a page at a time (each exactly once). */
  requests(batchId: string, o?: { limit?: number } & Signal): AsyncGenerator<BatchJob<O>, void, undefined>;
}

const query = (o: { limit?: number | undefined; cursor?: string | undefined } | undefined) => {
  const p = new URLSearchParams();
  if (o?.limit !== undefined) p.set('limit', String(o.limit));
  if (o?.cursor !== undefined) p.set('cursor', o.cursor);
  const s = p.toString();
  return s ? `?${s}` : '';
};

export function makeBatches<I, O>(t: Transport, base: string): Batches<I, O> {
  const at = (id: string) => `${base}/batch/${encodeURIComponent(id)}`;
  const call = <R>(path: string, o: Signal | undefined, more: CallOptions = {}) =>
    callJson<R>(t, path, { signal: o?.signal, ...more });
  // A resent add could add its requests twice: only 429/503 (nothing done) are retried.
  const write = <R>(path: string, body: unknown, o: Signal | undefined, method: CallOptions['method'] = 'POST') =>
    call<R>(path, o, {
      method,
      body,
      resend: method !== 'POST' || path.endsWith('/finalize') || path.endsWith('/cancel'),
    });
  const b: Batches<I, O> = {
    create: (requests = [], o = {}) =>
      write(
        `${base}/batch`,
        { requests, ...(o.name ? { name: o.name } : {}), ...(o.webhook ? { webhook: o.webhook } : {}) },
        o,
      ),
    add: (id, requests, o) => write(`${at(id)}/requests`, { requests }, o),
    remove: (id, requestId, o) => write(`${at(id)}/requests/${encodeURIComponent(requestId)}`, undefined, o, 'DELETE'),
    rename: (id, name, o) => write(at(id), { name }, o, 'PUT'),
    finalize: (id, o) => write(`${at(id)}/finalize`, {}, o),
    cancel: (id, o) => write(`${at(id)}/cancel`, {}, o),
    get: (id, o) => call(at(id), o),
    list: (o) => call(`${base}/batch${query(o)}`, o),
    page: (id, o) => call(`${at(id)}/requests${query(o)}`, o),
    async *requests(id, o) {
      let cursor: string | undefined;
      do {
        const p = await b.page(id, { ...o, ...(cursor ? { cursor } : {}) });
        yield* p.requests;
        cursor = p.nextCursor ?? undefined;
      } while (cursor);
    },
  };
  return b;
}
