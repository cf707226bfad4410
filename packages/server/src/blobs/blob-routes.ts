import { BerthError } from '@berth/protocol';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import type { JobRecord, Store } from '../store/types.js';
import { BlobJson } from '../core/blob-json.js';
import { receiveBody } from './body-ingest.js';
import type { JobBlobs } from './job-blobs.js';

/** What the blob routes need. */
export interface BlobRoutesDeps {
  blobs: JobBlobs;
  store: Pick<Store, 'get'>;
  /** Whether the `Authorization` header holds a worker token that may serve `endpointId`. */
  authorize: (header: string | undefined, endpointId: string) => Promise<boolean>;
  /** Largest output a worker may upload (the worker frame limit). */
  maxOutputBytes: number;
}

/**
 * The worker side of big values (issue #35), with the worker token of the job's endpoint, while the job runs; their
 * paths are in the route table (`http/route-table.ts`):
 * - `GET /v2/_worker/jobs/<id>/input`: the input, streamed from its blob file (`job.assign`'s `inputBlob`).
 * - `POST /v2/_worker/jobs/<id>/output?attempt=<n>`: a JSON output streamed into a blob file and checked off the
 *   event loop; answers `{blob, size}` for `job.complete`'s `outputBlob`.
 */
export interface BlobRoutes {
  input(req: ApiRequest, jobId: string): Promise<ApiResponse>;
  output(req: ApiRequest, jobId: string): Promise<ApiResponse>;
}

export function createBlobRoutes(deps: BlobRoutesDeps): BlobRoutes {
  return { input: (req, jobId) => input(deps, req, jobId), output: (req, jobId) => output(deps, req, jobId) };
}

/** `withInput`: the input route serves it; the output route only checks the job (a big input stays in the store). */
async function runningJob(deps: BlobRoutesDeps, req: ApiRequest, jobId: string, withInput = false): Promise<JobRecord> {
  const job = await deps.store.get(jobId, { input: withInput });
  if (job?.status !== 'IN_PROGRESS') throw new BerthError('job_not_found', `job ${jobId.slice(0, 100)} is not running`);
  if (!(await deps.authorize(req.headers['authorization'], job.endpointId)))
    throw new BerthError('unauthorized', "needs a worker token of the job's endpoint: Authorization: Bearer <token>");
  return job;
}

async function input(deps: BlobRoutesDeps, req: ApiRequest, jobId: string): Promise<ApiResponse> {
  if (req.method !== 'GET')
    throw new BerthError('method_not_allowed', `${req.method} is not allowed; use GET`, ['GET']);
  const job = await runningJob(deps, req, jobId, true);
  const value = job.input as unknown;
  if (value instanceof BlobJson) {
    const headers = { 'content-type': 'application/json; charset=utf-8' };
    return { status: 200, headers, stream: value.pieces(), length: value.length };
  }
  return { status: 200, json: value };
}

async function output(deps: BlobRoutesDeps, req: ApiRequest, jobId: string): Promise<ApiResponse> {
  if (req.method !== 'POST')
    throw new BerthError('method_not_allowed', `${req.method} is not allowed; use POST`, ['POST']);
  const job = await runningJob(deps, req, jobId);
  const attempt = Number(req.query.get('attempt'));
  if (attempt !== job.attempt)
    throw new BerthError('job_not_found', `job ${jobId.slice(0, 100)} is not running attempt ${attempt}`);
  const got = await receiveBody(req, deps.maxOutputBytes, deps.blobs.files, undefined);
  const blob = await deps.blobs.keepOutput(job.id, got);
  return { status: 200, json: blob };
}
