/**
 * A stable error code of the queue API, one per row of docs/errors.md. A type test checks it equals `ErrorCode` of
 * `@berth/protocol` (whose table a test checks against docs/errors.md), so they cannot drift. Type only: no bytes.
 */
export type ApiErrorCode =
  | 'invalid_json'
  | 'invalid_request'
  | 'invalid_wait'
  | 'invalid_ttl'
  | 'invalid_limit'
  | 'bad_http_request'
  | 'stream_not_supported'
  | 'unauthorized'
  | 'job_token_expired'
  | 'job_token_not_allowed'
  | 'forbidden'
  | 'file_signature_invalid'
  | 'file_url_expired'
  | 'key_endpoint_not_allowed'
  | 'key_read_only'
  | 'endpoint_not_found'
  | 'job_not_found'
  | 'batch_not_found'
  | 'route_not_found'
  | 'file_not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'job_not_retryable'
  | 'idempotency_key_reused'
  | 'batch_not_draft'
  | 'payload_too_large'
  | 'batch_too_many_requests'
  | 'unsupported_media_type'
  | 'range_not_satisfiable'
  | 'headers_too_large'
  | 'rate_limited'
  | 'batch_queue_full'
  | 'batch_limit_reached'
  | 'internal_error'
  | 'unavailable'
  | 'overloaded'
  | 'insufficient_storage'
  | 'no_workers_available'
  | 'worker_timeout'
  | 'affinity_worker_gone'
  | 'worker_lost'
  | 'processing_timeout';

/**
 * An error answer of the API, or a job stream ended by an error event. `code` is the server's stable code; an
 * answer without one (a proxy's page, RunPod's own errors) gets `http_<status>`.
 *
 * @example
 * try { await berth.endpoint('echo').status(id); }
 * catch (e) { if (e instanceof BerthApiError && e.code === 'job_not_found') console.log('gone'); }
 */
export class BerthApiError extends Error {
  override readonly name = 'BerthApiError';
  constructor(
    /** HTTP status. */
    readonly status: number,
    /** Stable code (`ApiErrorCode`), or `http_<status>` when the body had none. */
    readonly code: ApiErrorCode | (string & {}),
    message: string,
    /** The body's `details` (validation problems of `invalid_request`, ...). */
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** The request never got an answer: network errors on every try, or a stream that kept dropping. `cause`: the last one. */
export class BerthConnectionError extends Error {
  override readonly name = 'BerthConnectionError';
}

/** Builds the error of a non-2xx answer from its body (Berth's `{error, code, details}`, or anything else). */
export async function errorFrom(res: Response): Promise<BerthApiError> {
  const text = await res.text().catch(() => '');
  let body: { error?: unknown; code?: unknown; details?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {}
  const message = typeof body.error === 'string' ? body.error : text.slice(0, 200) || `HTTP ${res.status}`;
  const code = typeof body.code === 'string' ? body.code : `http_${res.status}`;
  return new BerthApiError(res.status, code, message, body.details);
}
