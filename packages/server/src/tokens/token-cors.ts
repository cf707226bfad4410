import { KeyChecker } from '../http/auth.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import { isJobToken, JOB_TOKEN_PREFIX } from './job-token.js';

/** The endpoint segments a browser preflight is answered on (endpoint ids and model slugs). */
const PREFLIGHT_TARGET = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * Sent on every answer to a request carrying a job token: any origin may read it. Safe with `*` because a job
 * token is a bearer credential the page sends itself (no cookies are involved) and covers one job, read-only.
 */
const CORS_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'retry-after',
};

/**
 * The credential of a request: the `Authorization` header's key or token, else (on `/stream` only, for
 * `EventSource`, which cannot set headers) the `?token=` query parameter, which takes a job token only.
 */
export function credentialOf(req: ApiRequest, route: string | undefined): string | undefined {
  const header = KeyChecker.secretOf(req.headers['authorization']);
  if (header !== undefined || route !== 'stream') return header;
  const q = req.query.get('token');
  return q !== null && isJobToken(q) ? q : undefined;
}

/**
 * `OPTIONS` on a route a job token may call (`tokenRoute`: a route of the table with `auth: 'job-token'`, on
 * endpoint `target`, with a job id): the CORS preflight of a browser on another origin (`fetch` with an
 * `Authorization` header). Undefined for any other request.
 */
export function tokenPreflight(
  req: ApiRequest,
  tokenRoute: boolean,
  target: string | undefined,
  jobId: string | undefined,
): ApiResponse | undefined {
  if (req.method !== 'OPTIONS' || !tokenRoute || !jobId || target === undefined || !PREFLIGHT_TARGET.test(target))
    return undefined;
  return {
    status: 204,
    headers: {
      ...CORS_HEADERS,
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'authorization, content-type, accept, last-event-id',
      'access-control-max-age': '600',
    },
    bytes: new Uint8Array(0),
  };
}

/** `res` with the CORS headers when `req` carried a job token (refusals included, so a page can read the code). */
export function withTokenCors(req: ApiRequest, res: ApiResponse): ApiResponse {
  const carries =
    req.headers['authorization']?.includes(JOB_TOKEN_PREFIX) === true ||
    (req.path.includes('/stream/') && req.query.has('token'));
  return carries ? { ...res, headers: { ...res.headers, ...CORS_HEADERS } } : res;
}
