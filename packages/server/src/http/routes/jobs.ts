import { assertMayWrite } from '../../keys/scope-guard.js';
import { QUERY, intParam } from '../query.js';
import type { RouteContext } from './route-context.js';
import { LEAN } from '../../jobs/job-service.js';

/**
 * GET|POST /status/<id>[?ttl=]: the job object (while IN_QUEUE with `queuePosition` and `waitingFor`); `ttl` resets
 * the remaining lifespan.
 */
export async function status(rc: RouteContext) {
  const ttl = intParam(rc.req.query, QUERY.ttl);
  if (ttl !== undefined) {
    assertMayWrite(rc.principal, 'changing ttl');
    await rc.service.setTtl(rc.endpointId, rc.jobId, ttl);
  }
  return { status: 200, json: await rc.service.statusObject(await rc.service.get(rc.endpointId, rc.jobId, LEAN)) };
}

/** GET|POST /status-sync/<id>?wait=: long-polls until terminal or the wait elapses. */
export async function statusSync(rc: RouteContext) {
  const wait = intParam(rc.req.query, QUERY.statusWait);
  const ttl = intParam(rc.req.query, QUERY.ttl);
  if (ttl !== undefined) {
    assertMayWrite(rc.principal, 'changing ttl');
    await rc.service.setTtl(rc.endpointId, rc.jobId, ttl);
  }
  return { status: 200, json: await rc.service.waitTerminal(rc.endpointId, rc.jobId, wait, rc.req.signal) };
}

/** POST /cancel/<id>. */
export async function cancel(rc: RouteContext) {
  return { status: 200, json: await rc.service.cancel(rc.endpointId, rc.jobId) };
}

/** POST /retry/<id>. */
export async function retry(rc: RouteContext) {
  const job = await rc.service.retry(rc.endpointId, rc.jobId);
  return { status: 200, json: { id: job.id, status: job.status } };
}

/** POST /purge-queue. */
export async function purgeQueue(rc: RouteContext) {
  return { status: 200, json: { removed: await rc.service.purge(rc.endpointId), status: 'completed' } };
}

/** GET /health. */
export async function health(rc: RouteContext) {
  return { status: 200, json: await rc.service.health(rc.endpointId) };
}
