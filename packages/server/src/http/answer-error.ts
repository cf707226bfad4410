import { BerthError, toErrorBody } from '@berth/protocol';
import type { Logger } from '@berth/protocol/log';
import { OVERLOADED_RETRY_AFTER_S } from './body-budget.js';
import { toOpenAiError } from './openai/errors.js';
import type { ApiRequest, ApiResponse } from './types.js';

/**
 * The answer to a failed request: the error body of docs/errors.md, or the OpenAI shape on the OpenAI routes
 * (`shape`), with `headers` (default: `Allow` on a 405, `Retry-After` when overloaded). A 5xx is logged.
 */
export function answerError(
  err: unknown,
  shape: 'berth' | 'openai',
  logger: Logger,
  req: ApiRequest,
  headers: Record<string, string> = errorHeaders(err),
): ApiResponse {
  const { status, body } = shape === 'openai' ? toOpenAiError(err) : toErrorBody(err);
  if (status >= 500)
    logger.error('request failed', {
      method: req.method,
      path: req.path,
      err: err instanceof Error ? err.stack : String(err),
    });
  return { status, headers, json: body };
}

/** The headers an error answer carries: `Allow` on a 405, `Retry-After` when overloaded. */
function errorHeaders(err: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  if (err instanceof BerthError && err.code === 'method_not_allowed' && Array.isArray(err.details))
    headers['allow'] = err.details.join(', ');
  if (err instanceof BerthError && err.code === 'overloaded') headers['retry-after'] = String(OVERLOADED_RETRY_AFTER_S);
  return headers;
}

/** 404 `route_not_found`: no route `<METHOD> <path>` (the path's first `max` characters), then `more`. */
export function routeNotFound(req: ApiRequest, more = '', max?: number): BerthError {
  return new BerthError('route_not_found', `no route ${req.method} ${req.path.slice(0, max)}${more}`);
}
