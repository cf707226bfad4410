import { BerthError, LIMITS } from '@berth/protocol';
import type { RouteContext } from '../http/routes/route-context.js';
import { assertMayWrite } from '../keys/scope-guard.js';
import type { ApiResponse } from '../http/types.js';
import { LEAN } from '../jobs/job-service.js';

/**
 * `POST /v2/<ep>/token/<job_id>?ttlSeconds=900&cancel=true`: a new job token for a job that exists (the one a page
 * holds expired while the job still runs). An API key only; a token with `cancel` needs a key that may cancel.
 * Answers `{id, token}`; 404 like `/status` when the job is unknown or gone.
 */
export async function issueToken(rc: RouteContext): Promise<ApiResponse> {
  if (!rc.tokens) throw new BerthError('route_not_found', 'job tokens are not available here');
  const raw = rc.req.query.get('ttlSeconds');
  const min = LIMITS.jobTokenTtlMinSeconds;
  const max = LIMITS.jobTokenTtlMaxSeconds;
  const ttl = raw === null ? undefined : /^\d{1,6}$/.test(raw) ? Number(raw) : Number.NaN;
  if (ttl !== undefined && !(ttl >= min && ttl <= max))
    throw new BerthError(
      'invalid_request',
      `query ttlSeconds must be a whole number of seconds from ${min} to ${max}, got "${(raw ?? '').slice(0, 40)}"`,
    );
  const cancelRaw = rc.req.query.get('cancel');
  if (cancelRaw !== null && cancelRaw !== 'true' && cancelRaw !== 'false')
    throw new BerthError('invalid_request', `query cancel must be true or false, got "${cancelRaw.slice(0, 40)}"`);
  const cancel = cancelRaw === 'true';
  if (cancel) assertMayWrite(rc.principal, 'a job token that may cancel');
  const job = await rc.service.get(rc.endpointId, rc.jobId, LEAN);
  const token = await rc.tokens.issue(rc.principal, rc.endpointId, job.id, {
    ...(ttl !== undefined ? { ttlSeconds: ttl } : {}),
    cancel,
  });
  return { status: 200, json: { id: job.id, token } };
}
