import { toJobObject } from '../../store/job-view.js';
import type { Store } from '../../store/types.js';
import { QUERY, intParam } from '../query.js';
import type { ApiResponse } from '../types.js';
import type { RouteContext } from './route-context.js';
import { LEAN } from '../../jobs/job-service.js';

/**
 * `GET /v2/<ep>/logs/<job_id>`: what the job's handler logged (every attempt), oldest first. Same auth, scope and
 * retention as `/status`: 404 once the job is gone.
 */
export async function jobLogs(rc: RouteContext, store: Store): Promise<ApiResponse> {
  const job = await rc.service.get(rc.endpointId, rc.jobId, LEAN);
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
  const limit = intParam(rc.req.query, QUERY.jobsLimit);
  const jobs = (await store.recent(rc.endpointId, limit)).map((r) => ({
    ...toJobObject(r),
    createdAt: new Date(r.createdAt).toISOString(),
  }));
  return { status: 200, json: { jobs } };
}
