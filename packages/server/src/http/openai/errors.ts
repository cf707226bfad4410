import { BerthError } from '@berth/protocol';

/** The error body of the OpenAI-compatible route, as OpenAI clients parse it. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  429: 'rate_limit_error',
  503: 'server_error',
};

/** Builds one OpenAI-shaped error body. */
export function openAiErrorBody(
  status: number,
  message: string,
  code: string,
  param: string | null = null,
): OpenAiErrorBody {
  return {
    error: {
      message,
      type: TYPE_BY_STATUS[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error'),
      param,
      code,
    },
  };
}

/**
 * Turns anything thrown on the OpenAI route into `{status, body}` in the OpenAI shape. The `code` is the same
 * stable Berth code the other routes use; `param` names the offending request field when there is one.
 */
export function toOpenAiError(err: unknown): { status: number; body: OpenAiErrorBody } {
  if (err instanceof BerthError) {
    const details = err.details as { param?: unknown } | undefined;
    const param = typeof details?.param === 'string' ? details.param : null;
    return { status: err.status, body: openAiErrorBody(err.status, err.message, err.code, param) };
  }
  return { status: 500, body: openAiErrorBody(500, 'internal error', 'internal_error') };
}
