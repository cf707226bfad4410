import { BerthError, decode, JobRequest, LIMITS } from '@berth/protocol';
import type { Logger } from '@berth/protocol/log';
import { plainJson } from '../core/raw-json.js';
import type { Clock } from '../clock.js';
import { parseJsonBody, readBody } from '../http/body.js';
import type { Operation } from '../http/guard.js';
import type { RouteContext } from '../http/routes/route-context.js';
import { sseEvent } from '../http/sse-frame.js';
import type { ApiResponse } from '../http/types.js';
import { newJob } from '../jobs/new-job.js';
import { toJobObject } from '../store/job-view.js';
import type { JobRecord, RetentionPolicy, Store } from '../store/types.js';
import { checkInput } from './input.js';
import { costOf } from './pricing.js';
import type { PublicModel } from './types.js';

export interface ModelRoutesDeps {
  models: Map<string, PublicModel>;
  store: Store;
  clock: Clock;
  retention: RetentionPolicy;
  logger: Logger;
  /** Asks for a sweep at epoch-ms `t`. */
  wakeAt(t: number): void;
  /** Runs the terminal hooks (webhooks) for a job that failed validation. */
  onTerminal(job: JobRecord): void;
}

export type RouteHandler = (rc: RouteContext) => Promise<ApiResponse>;

/** `/v2/<model_slug>/...`: the slug resolves to its endpoint; submits are validated, completed jobs carry `cost`. */
export interface ModelRoutes {
  /** The public model with this slug, if any. */
  get(slug: string): PublicModel | undefined;
  /**
   * Runs one operation for a model: `run`/`runsync` bodies are validated and completed with defaults first (a bad
   * input becomes a FAILED job, answered as a job object); a COMPLETED job object gets `output.cost`.
   */
  serve(model: PublicModel, operation: Operation, rc: RouteContext, handler: RouteHandler): Promise<ApiResponse>;
}

export function createModelRoutes(deps: ModelRoutesDeps): ModelRoutes {
  return {
    get: (slug) => deps.models.get(slug),
    async serve(model, operation, rc, handler) {
      if (operation === 'run' || operation === 'runsync') {
        const prepared = await prepare(deps, model, rc, operation === 'runsync');
        if ('response' in prepared) return prepared.response;
        rc = prepared.rc;
      }
      if (operation === 'retry') {
        // A job refused for its input would fail the same way again: submit a corrected one instead.
        const job = await rc.service.get(rc.endpointId, rc.jobId);
        const checked = checkInput(model, plainJson(job.input));
        if (!checked.ok)
          throw new BerthError(
            'job_not_retryable',
            `job ${job.id} has an invalid input (${checked.problems.join('; ')}); submit a new job with a corrected input`,
          );
      }
      return withCost(model, rc, await handler(rc));
    },
  };
}

async function prepare(
  deps: ModelRoutesDeps,
  model: PublicModel,
  rc: RouteContext,
  sync: boolean,
): Promise<{ rc: RouteContext } | { response: ApiResponse }> {
  const limit = sync ? LIMITS.runsyncBodyBytes : LIMITS.runBodyBytes;
  const buf = await readBody(rc.req.body, limit, rc.req.headers['content-length']);
  const passOn = { rc: { ...rc, req: { ...rc.req, body: buf } } };
  const parsed = parseJsonBody(buf);
  const req = decode(JobRequest, parsed);
  // Not a job request at all (no input object, bad policy...): the normal route answers its 400.
  if (!req.ok) return passOn;
  const checked = checkInput(model, req.value.input);
  if (checked.ok) {
    const body = JSON.stringify({ ...(parsed as object), input: checked.input });
    const headers = { ...rc.req.headers, 'content-length': String(Buffer.byteLength(body)) };
    return { rc: { ...rc, req: { ...rc.req, body, headers }, cost: costOf(model, checked.input) } };
  }
  const job = await storeFailed(deps, model, req.value, sync, `invalid_input: ${checked.problems.join('; ')}`);
  return { response: { status: 200, json: toJobObject(job) } };
}

/** A job that never reaches a worker: stored FAILED (so /status and webhooks report it), kept for the retention time. */
async function storeFailed(
  deps: ModelRoutesDeps,
  model: PublicModel,
  req: JobRequest,
  sync: boolean,
  error: string,
): Promise<JobRecord> {
  const now = deps.clock.now();
  const retainUntil = now + (sync ? deps.retention.sync : deps.retention.async);
  const base = newJob(model.endpoint, req, sync, now);
  delete base.s3Config; // never runs: no reason to keep the client's bucket credentials
  const job: JobRecord = {
    ...base,
    status: 'FAILED',
    error,
    finishedAt: now,
    // Deleted at the end of retention (or its ttl, if shorter), like any finished job.
    expiresAt: Math.min(base.expiresAt, retainUntil),
    retainUntil,
  };
  await deps.store.insert(job);
  deps.wakeAt(job.expiresAt);
  deps.logger.info('job refused: invalid input', { jobId: job.id, model: model.slug, error });
  deps.onTerminal(job);
  return job;
}

/**
 * Adds `cost` to the output of a COMPLETED job object that lacks it (a job submitted through the endpoint id and
 * read through the slug; jobs submitted on the slug have it stored), also in the final SSE event of `/stream`.
 */
async function withCost(model: PublicModel, rc: RouteContext, res: ApiResponse): Promise<ApiResponse> {
  if (res.status !== 200) return res;
  if ('events' in res) return { ...res, events: costInDoneEvent(model, rc, res.events) };
  if (!('json' in res)) return res;
  const json = await costed(model, rc, res.json);
  return json === undefined ? res : { ...res, json };
}

/** The job object with `output.cost`, or undefined when it is not a COMPLETED job with an object output. */
async function costed(model: PublicModel, rc: RouteContext, value: unknown): Promise<unknown> {
  const body = value as { id?: unknown; status?: unknown; output?: unknown } | null;
  if (body === null || typeof body !== 'object' || body.status !== 'COMPLETED' || typeof body.id !== 'string')
    return undefined;
  const output = plainJson(body.output);
  if (output === null || typeof output !== 'object' || Array.isArray(output)) return undefined;
  if ('cost' in output) return undefined; // priced at submit and stored with the output (JobRecord.cost)
  const job = await rc.service.get(rc.endpointId, body.id).catch(() => undefined);
  if (!job) return undefined;
  return { ...body, output: { ...output, cost: costOf(model, plainJson(job.input)) } };
}

const DONE = 'event: done\ndata: ';

async function* costInDoneEvent(
  model: PublicModel,
  rc: RouteContext,
  events: AsyncIterable<string>,
): AsyncGenerator<string> {
  for await (const ev of events) {
    if (!ev.startsWith(DONE)) {
      yield ev;
      continue;
    }
    const json = await costed(model, rc, JSON.parse(ev.slice(DONE.length)));
    yield json === undefined ? ev : sseEvent(JSON.stringify(json), 'done');
  }
}
