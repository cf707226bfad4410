/**
 * Stable error codes and the HTTP status each maps to. The table is the single source of truth for both the
 * server (which answers with `{error, code, details?}`) and the docs (`docs/errors.md`).
 */
export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_request: 400,
  invalid_wait: 400,
  invalid_ttl: 400,
  invalid_limit: 400,
  bad_http_request: 400,
  stream_not_supported: 400,
  no_workers_available: 400,
  worker_timeout: 400,
  unauthorized: 401,
  job_token_expired: 401,
  forbidden: 403,
  file_signature_invalid: 403,
  file_url_expired: 403,
  key_endpoint_not_allowed: 403,
  key_read_only: 403,
  job_token_not_allowed: 403,
  endpoint_not_found: 404,
  job_not_found: 404,
  batch_not_found: 404,
  route_not_found: 404,
  file_not_found: 404,
  affinity_worker_gone: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  job_not_retryable: 409,
  idempotency_key_reused: 409,
  batch_not_draft: 409,
  payload_too_large: 413,
  batch_too_many_requests: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  headers_too_large: 431,
  rate_limited: 429,
  batch_queue_full: 429,
  batch_limit_reached: 429,
  internal_error: 500,
  worker_lost: 502,
  unavailable: 503,
  overloaded: 503,
  processing_timeout: 504,
  insufficient_storage: 507,
} as const satisfies Record<string, number>;

/** A stable, snake_case error code. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** The one error body of every non-OpenAI route. */
export interface ErrorBody {
  error: string;
  code: ErrorCode;
  details?: unknown;
}

/** Codes used on the worker WebSocket (sent in `error` messages and as close reasons). */
export const WS_ERROR_CODES = [
  'protocol_mismatch',
  'invalid_message',
  'unknown_endpoint',
  'unauthorized',
  'duplicate_worker',
] as const;
export type WsErrorCode = (typeof WS_ERROR_CODES)[number];

/**
 * An error with a stable code. Throw it from server code; `toErrorBody` turns anything thrown into the wire shape.
 *
 * @example throw new BerthError('job_not_found', `no job ${id}`)
 */
export class BerthError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;
  /**
   * @param details Sent to clients as `details` (e.g. the allowed methods of a 405).
   * @param options `cause`: the error this one wraps (ES2022 `ErrorOptions`), kept for logs and never sent.
   */
  constructor(code: ErrorCode, message: string, details?: unknown, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BerthError';
    this.code = code;
    this.details = details;
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** Turns any thrown value into `{status, body}`; unknown errors become a 500 without leaking internals. */
export function toErrorBody(err: unknown): { status: number; body: ErrorBody } {
  if (err instanceof BerthError) {
    const body: ErrorBody = { error: err.message, code: err.code };
    if (err.details !== undefined) body.details = err.details;
    return { status: err.status, body };
  }
  if (isDiskFull(err))
    return {
      status: ERROR_STATUS.insufficient_storage,
      body: {
        error: 'the server has no disk space left; nothing was stored, retry later',
        code: 'insufficient_storage',
      },
    };
  return { status: 500, body: { error: 'internal error', code: 'internal_error' } };
}

/**
 * A store or file system out of space: SQLite's `SQLITE_FULL` ("database or disk is full"), PostgreSQL's
 * `disk_full` (SQLSTATE 53100), ENOSPC or EDQUOT from the file system.
 */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_FULL' || code === '53100' || code === 'ENOSPC' || code === 'EDQUOT';
}
