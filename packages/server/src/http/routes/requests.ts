import { BerthError, JobStatus } from '@berth/protocol';
import { toJobObject } from '../../store/job-view.js';
import type { JobListQuery, Store } from '../../store/types.js';
import { QUERY, intParam } from '../query.js';
import type { ApiResponse } from '../types.js';
import type { RouteContext } from './route-context.js';

const STATES = JobStatus.options;

/** `?status=A,B`: the states asked for (400 `invalid_request` naming an unknown one), or undefined: all. */
function statusFilter(raw: string | null): JobStatus[] | undefined {
  if (raw === null || raw.trim() === '') return undefined;
  const out: JobStatus[] = [];
  for (const part of raw.split(',')) {
    const s = part.trim().toUpperCase();
    if (!(STATES as readonly string[]).includes(s))
      throw new BerthError(
        'invalid_request',
        `status must be a comma-separated list of ${STATES.join(', ')} (got ${JSON.stringify(part.slice(0, 40))})`,
      );
    out.push(s as JobStatus);
  }
  return out;
}

/** The cursor of the page after `last`: its createdAt and id, base64url. */
const cursorOf = (last: { createdAt: number; id: string }) =>
  Buffer.from(`${last.createdAt}:${last.id}`).toString('base64url');

function readCursor(raw: string | null): JobListQuery['after'] {
  if (raw === null || raw === '') return undefined;
  const text = Buffer.from(raw, 'base64url').toString('utf8');
  const at = text.indexOf(':');
  const createdAt = Number(text.slice(0, at));
  const id = text.slice(at + 1);
  if (at < 1 || !Number.isSafeInteger(createdAt) || id === '' || id.length > 200)
    throw new BerthError('invalid_request', 'cursor must be the nextCursor of a previous /requests answer');
  return { createdAt, id };
}

/**
 * `GET /v2/<ep>/requests[?limit=n][&status=A,B][&cursor=c]`: the endpoint's requests (jobs of every state still
 * held), newest first, as `{"requests": [job object + createdAt], "nextCursor": c | null}`. Pages follow the
 * (createdAt, id) order, so a page never repeats or skips a job that existed when the listing started. Rate limit:
 * operation `requests`, 10 per 10 s like RunPod's.
 */
export async function listRequests(rc: RouteContext, store: Store): Promise<ApiResponse> {
  const limit = intParam(rc.req.query, QUERY.jobsLimit);
  const statuses = statusFilter(rc.req.query.get('status'));
  const after = readCursor(rc.req.query.get('cursor'));
  if (!store.listJobs) throw new BerthError('route_not_found', `no route GET ${rc.req.path} on this store`);
  // One more than the page: whether another page follows.
  const rows = await store.listJobs(rc.endpointId, {
    limit: limit + 1,
    ...(after ? { after } : {}),
    ...(statuses ? { statuses } : {}),
  });
  const page = rows.slice(0, limit);
  const requests = page.map((r) => ({ ...toJobObject(r), createdAt: new Date(r.createdAt).toISOString() }));
  const last = page.at(-1);
  return { status: 200, json: { requests, nextCursor: rows.length > limit && last ? cursorOf(last) : null } };
}
