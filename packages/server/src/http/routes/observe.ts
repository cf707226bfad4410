import { BerthError } from '@berth/protocol';
import { toJobObject } from '../../jobs/job-view.js';
import type { Store } from '../../store/types.js';
import type { ApiResponse } from '../types.js';
import type { RouteContext } from './route-context.js';

export const JOBS_LIMIT_DEFAULT = 50;
export const JOBS_LIMIT_MAX = 500;

/**
 * `GET /v2/<ep>/logs/<job_id>`: what the job's handler logged (every attempt), oldest first. Same auth, scope and
 * retention as `/status`: 404 once the job is gone.
 */
export async function jobLogs(rc: RouteContext, store: Store): Promise<ApiResponse> {
  const job = await rc.service.get(rc.endpointId, rc.jobId);
  const log = (await store.logs(job.id)) ?? { lines: [], dropped: 0 };
  const logs = log.lines.map((l) => ({
    time: new Date(l.at).toISOString(),
    level: l.level,
    message: l.message,
    workerId: l.workerId,
    attempt: l.attempt,
    ...(l.fields !== undefined ? { fields: l.fields } : {}),
  }));
  return { status: 200, json: { id: job.id, logs, dropped: log.dropped } };
}

/** `GET /v2/<ep>/jobs?limit=N`: the endpoint's most recent jobs (job objects plus `createdAt`), newest first. */
export async function recentJobs(rc: RouteContext, store: Store): Promise<ApiResponse> {
  const raw = rc.req.query.get('limit');
  let limit = JOBS_LIMIT_DEFAULT;
  if (raw !== null) {
    limit = /^\d{1,6}$/.test(raw) ? Number(raw) : NaN;
    if (!(limit >= 1 && limit <= JOBS_LIMIT_MAX))
      throw new BerthError(
        'invalid_limit',
        `query limit must be a whole number from 1 to ${JOBS_LIMIT_MAX}, got "${raw.slice(0, 40)}"`,
      );
  }
  const jobs = (await store.recent(rc.endpointId, limit)).map((r) => ({
    ...toJobObject(r),
    createdAt: new Date(r.createdAt).toISOString(),
  }));
  return { status: 200, json: { jobs } };
}
