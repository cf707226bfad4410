import { BerthError, JobStatus } from '@berth/protocol';
import { toJobObject } from '../../store/job-view.js';
import type { Store } from '../../store/types.js';
import { QUERY, intParam } from '../query.js';
import type { ApiResponse } from '../types.js';
import type { RouteContext } from './route-context.js';
import { pageCursor, readPageCursor } from './page-cursor.js';

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

/**
 * `GET /v2/<ep>/requests[?limit=n][&status=A,B][&cursor=c]`: the endpoint's requests (jobs of every state still
 * held), newest first, as `{"requests": [job object + createdAt], "nextCursor": c | null}`. Pages follow the
 * (createdAt, id) order, so a page never repeats or skips a job that existed when the listing started. Rate limit:
 * operation `requests`, 10 per 10 s like RunPod's.
 */
export async function listRequests(rc: RouteContext, store: Store): Promise<ApiResponse> {
  const limit = intParam(rc.req.query, QUERY.jobsLimit);
  const statuses = statusFilter(rc.req.query.get('status'));
  const after = readPageCursor(rc.req.query.get('cursor'), '/requests');
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
  return { status: 200, json: { requests, nextCursor: rows.length > limit && last ? pageCursor(last) : null } };
}
