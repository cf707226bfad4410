import { BerthError } from '@berth/protocol';
import type { CoreContext } from '../jobs/context.js';
import type { WorkerReports } from '../jobs/worker-reports.js';
import { parseJsonBody, readBody } from '../http/body.js';
import { receiveBody } from '../blobs/body-ingest.js';
import type { JobBlobs } from '../blobs/job-blobs.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import type { PullSession } from './pull-session.js';

/** Longest `check` and `reason` kept from a fitness report (runpod-python cuts the reason at 256). */
const MAX_FITNESS_TEXT = 512;

/** Largest result or stream chunk a pull worker may post (as a WebSocket message). */
const MAX_REPORT_BYTES = 64 * 1024 * 1024;
const OK: ApiResponse = { status: 200, json: {} };

/** The JSON object a worker posted, whatever its Content-Type says (runpod-python sends JSON as a form type). */
async function reportBody(req: ApiRequest): Promise<Record<string, unknown>> {
  return reportObject(parseJsonBody(await readBody(req.body, MAX_REPORT_BYTES, req.headers['content-length'])));
}

function reportObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BerthError('invalid_request', 'the body must be a JSON object like {"output": ...} or {"error": "..."}');
  return body as Record<string, unknown>;
}

/** The attempt this worker runs of `jobId`, or undefined when the job is no longer its (the report is stale). */
async function attemptOf(ctx: CoreContext, s: PullSession, jobId: string): Promise<number | undefined> {
  const known = s.inflight.get(jobId);
  if (known !== undefined) return known;
  // Not in the session (it was retired and came back, or the control plane restarted): the store decides.
  const job = await ctx.store.get(jobId);
  return job && job.status === 'IN_PROGRESS' && job.workerId === s.workerId && job.endpointId === s.endpointId
    ? job.attempt
    : undefined;
}

const errorText = (e: unknown): string => (typeof e === 'string' ? e : JSON.stringify(e));

/**
 * `POST /v2/<ep>/job-done/<worker>/<job>?isStream=`: `{"output": v}` completes the job, `{"error": "..."}` fails
 * it (`output` beside an error is dropped), `{}` completes it without output, `{"status": "IN_PROGRESS",
 * "output": p}` is progress (ignored once the job has its result: runpod-python posts progress from a thread,
 * often after the result). A report for a job that is no longer this worker's is answered 200 and dropped.
 */
export async function jobDone(
  ctx: CoreContext,
  blobs: JobBlobs,
  reports: WorkerReports,
  s: PullSession,
  req: ApiRequest,
  jobId: string,
): Promise<ApiResponse> {
  // A big result streams into a blob file, checked off the event loop; its output stays bytes (issue #35).
  const got = await receiveBody(req, MAX_REPORT_BYTES, blobs.files, 'output');
  let body: Record<string, unknown>;
  if ('small' in got) body = reportObject(parseJsonBody(got.small));
  else {
    const { result } = got.big;
    body = result.fields;
    if (result.span && result.keyKind !== 'absent')
      body['output'] = await blobs.value(got.big, result.span, { jobId, kind: 'out' });
    else await blobs.drop(got.big);
  }
  const attempt = await attemptOf(ctx, s, jobId);
  const progress = body['status'] === 'IN_PROGRESS';
  if (attempt === undefined) {
    if (!progress) ctx.logger.debug('stale pull result dropped', { jobId, workerId: s.workerId });
    return OK;
  }
  if (progress) {
    await reports.onWorkerMessage(s, { type: 'job.progress', id: jobId, attempt, progress: body['output'] });
    return OK;
  }
  if (body['stopPod'] === true)
    ctx.logger.info('pull worker asked to be restarted after this job (refresh_worker)', {
      jobId,
      workerId: s.workerId,
    });
  const msg =
    body['error'] !== undefined && body['error'] !== null
      ? { type: 'job.fail' as const, id: jobId, attempt, error: errorText(body['error']) }
      : { type: 'job.complete' as const, id: jobId, attempt, output: body['output'] };
  await reports.onWorkerMessage(s, msg);
  s.forget(jobId);
  return OK;
}

/** `POST /v2/<ep>/job-stream/<worker>/<job>`: one chunk, `{"output": chunk}`, in order. */
export async function jobStream(
  ctx: CoreContext,
  reports: WorkerReports,
  s: PullSession,
  req: ApiRequest,
  jobId: string,
): Promise<ApiResponse> {
  const body = await reportBody(req);
  const attempt = await attemptOf(ctx, s, jobId);
  if (attempt === undefined) return OK;
  let d = s.delivered.get(jobId);
  if (!d) s.delivered.set(jobId, (d = { at: performance.now(), misses: 0, seq: 0 }));
  const seq = d.seq++;
  await reports.onWorkerMessage(s, { type: 'job.stream', id: jobId, attempt, seq, chunks: [body['output']] });
  return OK;
}

/**
 * `GET /v2/<ep>/ping/<worker>?job_id=a,b&runpod_version=`: the jobs the worker runs now (`job_id` absent when
 * idle; URL-encoded commas; runpod-python 1.10.1+). A fitness report (`status=unhealthy`) is `fitnessReport`.
 */
export function pingIds(req: ApiRequest): Set<string> {
  const ids = new Set<string>();
  for (const v of req.query.getAll('job_id')) for (const id of v.split(',')) if (id.trim() !== '') ids.add(id.trim());
  return ids;
}

/**
 * `GET /v2/<ep>/ping/<worker>?status=unhealthy&check=<name>&reason=<text>&runpod_version=`: the worker failed a
 * start-up (fitness) check and exits (runpod-python 1.11+, `rp_fitness.py`). Logged with the check and reason; the
 * worker counts as `unhealthy` in /health and the Monitor view until a worker of that id connects, or for
 * `FITNESS_KEEP_MS`. Its running jobs, if any, are left to the usual loss detection.
 */
export function fitnessReport(ctx: CoreContext, req: ApiRequest, workerId: string, endpointId: string): void {
  const text = (name: string) => (req.query.get(name) ?? '').slice(0, MAX_FITNESS_TEXT);
  const check = text('check') || 'unnamed';
  const reason = text('reason') || 'no reason given';
  const runpodVersion = req.query.get('runpod_version')?.slice(0, 40);
  ctx.registry.fitness.report({
    workerId,
    endpointId,
    check,
    reason,
    at: performance.now(),
    ...(runpodVersion ? { runpodVersion } : {}),
  });
  ctx.logger.warn('pull worker failed a fitness check and exits', {
    workerId,
    endpointId,
    check,
    reason,
    ...(runpodVersion ? { runpodVersion } : {}),
  });
}
