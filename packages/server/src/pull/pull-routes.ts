import { BerthError, ENDPOINT_ID_RE, toErrorBody, WORKER_ID_RE } from '@berth/protocol';
import type { CoreContext } from '../jobs/context.js';
import type { Dispatcher } from '../jobs/dispatcher.js';
import type { JobBlobs } from '../blobs/job-blobs.js';
import type { WorkerReports } from '../jobs/worker-reports.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import { pollStops, takeJobs } from './poll-handlers.js';
import type { PullWorkers } from './pull-workers.js';
import type { WorkerIdentity } from '../keys/worker-auth.js';
import { RepollLimiter } from './repoll-limiter.js';
import { fitnessReport, jobDone, jobStream, pingIds } from './report-handlers.js';

/** The operations of RunPod's worker protocol; their paths and methods are in the route table (`http/route-table.ts`). */
export type PullOp = 'job-take' | 'job-take-batch' | 'job-stop' | 'ping' | 'job-done' | 'job-stream';

/** One pull-protocol request as the route table matched it: `/v2/<endpoint>/<op>/<worker_id>[/<job_id>]`. */
export interface PullCall {
  op: PullOp;
  /** The op's method (from the route table): another is 405, once the worker token is checked. */
  method: 'GET' | 'POST';
  endpointId: string;
  workerId: string | undefined;
  jobId: string | undefined;
  /** The path has the op's shape (a worker id, and a job id for job-done and job-stream); otherwise 404. */
  wellFormed: boolean;
}

const MAX_BATCH = 1024;

export interface PullRoutesDeps {
  ctx: CoreContext;
  /** Big results streamed to blob files (issue #35). */
  blobs: JobBlobs;
  dispatcher: Dispatcher;
  reports: WorkerReports;
  workers: PullWorkers;
  /** THE worker credential check: the raw `Authorization` header (a bare token, or `Bearer <token>`) for an endpoint. */
  authenticate(header: string | undefined, endpointId: string): Promise<WorkerIdentity | null>;
  /** How long job-take and job-stop polls are held before 204. */
  holdMs: number;
  draining(): boolean;
}

/**
 * RunPod's worker protocol under `/v2/<endpoint>/` (see docs/worker-protocol.md, "Pull protocol"), for the route
 * table's pull routes. Checks: path shape (404), worker token (401), endpoint (404), method (405).
 */
export function createPullRoutes(deps: PullRoutesDeps): (req: ApiRequest, call: PullCall) => Promise<ApiResponse> {
  const limiter = new RepollLimiter();
  return (req, call) => servePull(deps, limiter, req, call);
}

/** One pull-protocol request; a failed `job-take` makes the next one from that worker wait (`RepollLimiter`). */
async function servePull(
  deps: PullRoutesDeps,
  limiter: RepollLimiter,
  req: ApiRequest,
  call: PullCall,
): Promise<ApiResponse> {
  const take = call.op === 'job-take' || call.op === 'job-take-batch';
  const key = `${call.endpointId}/${call.workerId}`;
  if (take && limiter.tooSoon(key, performance.now())) {
    throw new BerthError('rate_limited', 'job-take failed less than a second ago; poll again in a few seconds');
  }
  let status = 500;
  try {
    const res = await serve(deps, req, call);
    status = res.status;
    return res;
  } catch (err) {
    status = toErrorBody(err).status;
    throw err;
  } finally {
    if (take) limiter.record(key, status, performance.now());
  }
}

async function serve(deps: PullRoutesDeps, req: ApiRequest, call: PullCall): Promise<ApiResponse> {
  const { op, endpointId, workerId = '', jobId } = call;
  if (!call.wellFormed || !WORKER_ID_RE.test(workerId) || jobId === '')
    throw new BerthError('route_not_found', `no route ${req.method} ${req.path}`);
  const identity = await deps.authenticate(req.headers['authorization'], endpointId);
  if (!identity) {
    throw new BerthError(
      'unauthorized',
      'the worker protocol needs a worker token: Authorization: <BERTH_WORKER_TOKEN> (RUNPOD_AI_API_KEY)',
    );
  }
  if (!ENDPOINT_ID_RE.test(endpointId))
    throw new BerthError('endpoint_not_found', `endpoint ${endpointId.slice(0, 80)} not found`);
  if (req.method !== call.method)
    throw new BerthError('method_not_allowed', `${req.method} is not allowed on ${op}; use ${call.method}`, [
      call.method,
    ]);
  const { ctx, dispatcher, reports, workers } = deps;
  if (op === 'ping') {
    if (req.query.get('status') === 'unhealthy') {
      fitnessReport(ctx, req, workerId, endpointId);
      return { status: 200, json: {} };
    }
    await workers.onPing(workerId, endpointId, pingIds(req));
    return { status: 200, json: {} };
  }
  if (deps.draining() && (op === 'job-take' || op === 'job-take-batch'))
    throw new BerthError('rate_limited', 'the control plane is shutting down; poll again later');
  const s = await workers.session(workerId, endpointId, identity);
  switch (op) {
    case 'job-take':
      return takeJobs(s, req, undefined, deps.holdMs, dispatcher);
    case 'job-take-batch':
      return takeJobs(s, req, batchSize(req), deps.holdMs, dispatcher);
    case 'job-stop':
      return pollStops(s, req, deps.holdMs);
    case 'job-done':
      return jobDone(ctx, deps.blobs, reports, s, req, jobId!);
    default:
      return jobStream(ctx, reports, s, req, jobId!);
  }
}

function batchSize(req: ApiRequest): number {
  const raw = req.query.get('batch_size') ?? '1';
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new BerthError(
      'invalid_request',
      `batch_size must be a positive integer (got ${JSON.stringify(raw.slice(0, 20))})`,
    );
  return Math.min(n, MAX_BATCH);
}
