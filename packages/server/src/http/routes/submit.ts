import { BerthError, LIMITS, decodeJobRequest, type JobRequest } from '@berth/protocol';
import { SpanStatusCode, type Context } from '@opentelemetry/api';
import { readBody, parseBigJsonBody } from '../body.js';
import { QUERY, intParam } from '../query.js';
import type { RouteContext } from './route-context.js';
import { idempotencyKey, type IdempotencyScope } from '../../jobs/idempotency.js';

async function readJobRequest(rc: RouteContext, limit: number): Promise<JobRequest> {
  const buf = await readBody(rc.req.body, limit, rc.req.headers['content-length']);
  // A big body's input stays the bytes it came as (`RawJson`): checked off the event loop, never re-serialized.
  const big = await parseBigJsonBody(buf, 'input');
  const parsed = big.value as Record<string, unknown>;
  let raw = big.raw;
  if (raw) {
    // An object (its first byte is `{`) is checked as {} here and replaced by its bytes below; anything else goes
    // through the checks parsed, for their error message.
    if (raw.bytes()[0] === 0x7b) parsed['input'] = {};
    else [parsed['input'], raw] = [raw.value, undefined];
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BerthError('invalid_request', 'request body must be a JSON object like {"input": {...}}');
  }
  const r = decodeJobRequest(parsed);
  if (!r.ok) throw new BerthError('invalid_request', r.error, r.issues);
  if (r.value.webhookEvents !== undefined && r.value.webhook === undefined)
    throw new BerthError('invalid_request', 'webhookEvents: needs a webhook URL in "webhook"');
  if (raw) r.value.input = raw as unknown as JobRequest['input'];
  return r.value;
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
