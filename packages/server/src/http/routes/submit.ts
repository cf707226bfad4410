import { BerthError, LIMITS, decodeJobRequest, type JobRequest } from '@berth/protocol';
import { SpanStatusCode, type Context } from '@opentelemetry/api';
import { parseJsonBody } from '../body.js';
import { receiveBody } from '../../blobs/body-ingest.js';
import { readRange } from '../../blobs/job-blobs.js';
import { QUERY, intParam } from '../query.js';
import type { RouteContext } from './route-context.js';
import { idempotencyKey, type IdempotencyScope } from '../../jobs/idempotency.js';

async function readJobRequest(rc: RouteContext, limit: number): Promise<JobRequest> {
  const got = await receiveBody(rc.req, limit, rc.blobs.files, 'input');
  if ('small' in got) return decodeRequest(parseJsonBody(got.small));
  // A big body was streamed to a blob file and checked off the event loop: its other fields come parsed, its
  // input stays bytes in the file (issue #35).
  const { result } = got.big;
  try {
    const parsed: Record<string, unknown> = { ...result.fields };
    // An object input is checked as {} here and replaced by its reference below; anything else gets a
    // stand-in of its kind, for the checks' error message.
    if (result.keyKind === 'other')
      parsed['input'] = result.span ? await standIn(got.big.temp.path, result.span) : null;
    else if (result.keyKind === 'object') parsed['input'] = {};
    const req = decodeRequest(parsed);
    if (result.keyKind === 'object' && result.span)
      req.input = (await rc.blobs.value(got.big, result.span)) as unknown as JobRequest['input'];
    else await rc.blobs.drop(got.big);
    return req;
  } catch (err) {
    await rc.blobs.drop(got.big);
    throw err;
  }
}

function decodeRequest(parsed: unknown): JobRequest {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BerthError('invalid_request', 'request body must be a JSON object like {"input": {...}}');
  }
  const r = decodeJobRequest(parsed);
  if (!r.ok) throw new BerthError('invalid_request', r.error, r.issues);
  if (r.value.webhookEvents !== undefined && r.value.webhook === undefined)
    throw new BerthError('invalid_request', 'webhookEvents: needs a webhook URL in "webhook"');
  return r.value;
}

/** A value of the same JSON kind as the one at `span` (a string, array, number...), to word the check's error. */
async function standIn(path: string, span: [number, number]): Promise<unknown> {
  const first = (await readRange(path, span[0], span[0] + 1))[0];
  if (first === 0x22) return '';
  if (first === 0x5b) return [];
  if (first === 0x74 || first === 0x66) return true;
  if (first === 0x6e) return null;
  return 0;
}

/** The job token a submit asked for with `"token": {...}` (docs/job-tokens.md), or undefined. */
async function tokenFor(rc: RouteContext, req: JobRequest, jobId: string): Promise<string | undefined> {
  if (req.token === undefined) return undefined;
  if (!rc.tokens) throw new BerthError('invalid_request', 'token: job tokens are not available on this route');
  return rc.tokens.issue(rc.principal, rc.endpointId, jobId, req.token);
}

/** The `Idempotency-Key` of a submit, scoped to the caller's API key. */
function idem(rc: RouteContext): IdempotencyScope | undefined {
  const key = idempotencyKey(rc.req.headers['idempotency-key']);
  return key === undefined ? undefined : { keyId: rc.principal.keyId, key };
}

/**
 * POST /run: answers `{id, status: "IN_QUEUE"}` once the job is stored. A retry with the same `Idempotency-Key`
 * answers the same id and the job's current status.
 */
export function run(rc: RouteContext) {
  return traced(rc, '/v2/:endpoint/run', async (trace) => {
    const scope = idem(rc);
    const req = await readJobRequest(rc, LIMITS.runBodyBytes);
    const job = await rc.service.submit(rc.endpointId, req, { sync: false, cost: rc.cost, idem: scope, trace });
    const token = await tokenFor(rc, req, job.id);
    const json = { id: job.id, status: job.replayed ? job.status : 'IN_QUEUE' };
    return { status: 200, json: token === undefined ? json : { ...json, token } };
  });
}

/** POST /runsync?wait=: answers the job object when terminal or when the wait elapses. */
export function runsync(rc: RouteContext) {
  return traced(rc, '/v2/:endpoint/runsync', async (trace) => {
    const wait = intParam(rc.req.query, QUERY.runsyncWait);
    const scope = idem(rc);
    const req = await readJobRequest(rc, LIMITS.runsyncBodyBytes);
    const job = await rc.service.submit(rc.endpointId, req, { sync: true, cost: rc.cost, idem: scope, trace });
    const token = await tokenFor(rc, req, job.id);
    // A job deleted while we wait (ttl, purge) answers 404 job_not_found.
    const json = await rc.service.waitTerminal(rc.endpointId, job.id, wait, rc.req.signal, job);
    return { status: 200, json: token === undefined ? json : { ...json, token } };
  });
}

/** Runs a submit route; with tracing on, inside the span of its HTTP request (the parent of the job's spans). */
async function traced<R extends { status: number }>(
  rc: RouteContext,
  route: string,
  fn: (trace: Context | undefined) => Promise<R>,
): Promise<R> {
  const tracer = rc.service.tracer;
  if (!tracer) return fn(undefined);
  const { span, ctx } = tracer.request('POST', route, rc.req.headers);
  span.setAttribute('berth.endpoint.id', rc.endpointId);
  try {
    const res = await fn(ctx);
    span.setAttribute('http.response.status_code', res.status);
    return res;
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    if (err instanceof BerthError) span.setAttribute('berth.error.code', err.code);
    throw err;
  } finally {
    span.end();
  }
}
