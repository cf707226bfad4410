import { BerthApiError } from './errors.js';
import type { EndpointTypes, SchemaLike } from './infer.js';
import { type StreamOptions, streamJob } from './stream.js';
import { type Batches, makeBatches } from './batches.js';
import { type CallOptions, type Transport, callJson } from './transport.js';
import {
  type Health,
  type Job,
  type JobLogs,
  type JobPolicy,
  type JobToken,
  type Purged,
  type Queued,
  TERMINAL,
  type TokenRequest,
  type WebhookEvent,
} from './types.js';

/** Options of `run` and `runSync`. */
export interface RunOptions {
  /** URL the server POSTs the final job object to (docs/webhooks.md). */
  webhook?: string;
  /** The events sent to `webhook` (docs/webhooks.md). Default: `['completed']`. */
  webhookEvents?: WebhookEvent[];
  policy?: JobPolicy;
  /** Ask for a job token (docs/job-tokens.md): the answer's `token`, for a browser to read this one job. */
  token?: TokenRequest;
  /**
   * `Idempotency-Key` header: the same key answers the same job (docs/api.md). Default: a new random key per call,
   * reused by that call's own retries, so a submit whose answer was lost is never stored twice.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** More top-level fields of the request body, sent as they are (`s3Config`, or fields a newer server knows). */
  body?: Record<string, unknown>;
}

/** Options of `runSync`: `RunOptions` and how long the server holds one request. */
export interface RunSyncOptions extends RunOptions {
  /** `?wait=` of `/runsync` and of the `/status-sync` calls after it, ms (1000..300000). Default: the server's (90 s). */
  waitMs?: number;
}

/** Options of calls that read or change one job. */
export interface CallSignal {
  signal?: AbortSignal;
}

/** Options of `wait(id)`. */
export interface WaitOptions extends CallSignal {
  /** `?wait=` of each `/status-sync` call, ms (1000..300000). Default: the server's (90 s). */
  waitMs?: number;
}

/** The calls of one endpoint, typed by what `endpoint()` was given (see `createClient`). */
export interface Endpoint<T extends EndpointTypes = EndpointTypes> {
  readonly id: string;
  /** POST `/run`: stores the job, answers `{id, status: 'IN_QUEUE'}`. */
  run(input: T['input'], options?: RunOptions): Promise<Queued>;
  /** POST `/runsync`, then `/status-sync` until the job is terminal: the finished job. */
  runSync(input: T['input'], options?: RunSyncOptions): Promise<Job<T['output']>>;
  /** GET `/status/<id>`: the job now. */
  status(id: string, options?: CallSignal): Promise<Job<T['output']>>;
  /** GET `/status-sync/<id>` until the job is terminal (each call long-polls): the finished job. */
  wait(id: string, options?: WaitOptions): Promise<Job<T['output']>>;
  /** The output chunks over SSE, resumed across dropped connections; returns the final job. */
  stream(id: string, options?: StreamOptions): AsyncGenerator<T['chunk'], Job<T['output']>, undefined>;
  /** POST `/cancel/<id>`: the job, `CANCELLED` (a terminal job unchanged). */
  cancel(id: string, options?: CallSignal): Promise<Job<T['output']>>;
  /** POST `/retry/<id>` of a `FAILED` / `TIMED_OUT` job: `{id, status: 'IN_QUEUE'}` (409 `job_not_retryable` otherwise). */
  retry(id: string, options?: CallSignal): Promise<Queued>;
  /** POST `/purge-queue`: removes the queued jobs, answers how many. */
  purgeQueue(options?: CallSignal): Promise<Purged>;
  /** GET `/health`: job counts and workers. */
  health(options?: CallSignal): Promise<Health>;
  /** GET `/logs/<id>`: what the handler logged, every attempt (Berth only). */
  logs(id: string, options?: CallSignal): Promise<JobLogs>;
  /** POST `/token/<id>`: a new job token for this job (Berth only; docs/job-tokens.md). */
  token(id: string, options?: TokenRequest & CallSignal): Promise<JobToken>;
  /** Batch Jobs (RunPod's `/batch` routes): many requests as one named batch, run behind interactive jobs. */
  readonly batches: Batches<T['input'], T['output']>;
}

const q = (waitMs: number | undefined) => (waitMs === undefined ? '' : `?wait=${waitMs}`);

/** `?ttlSeconds=&cancel=` of `/token/<id>`, from the fields given. */
function tokenQuery(o: TokenRequest | undefined): string {
  const params = new URLSearchParams();
  if (o?.ttlSeconds !== undefined) params.set('ttlSeconds', String(o.ttlSeconds));
  if (o?.cancel !== undefined) params.set('cancel', String(o.cancel));
  const query = params.toString();
  return query ? `?${query}` : '';
}

/** Random, 122 bits; `crypto.randomUUID` where the page is a secure context, else from `getRandomValues`. */
function newKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

export function makeEndpoint<T extends EndpointTypes>(t: Transport, id: string, schema?: SchemaLike): Endpoint<T> {
  const base = `/${encodeURIComponent(id)}`;
  const get = <R>(path: string, o?: CallSignal, more?: CallOptions) =>
    callJson<R>(t, base + path, { signal: o?.signal, ...more });
  const post = <R>(path: string, o?: CallSignal, resend = true) =>
    get<R>(path, o, { method: 'POST', body: {}, resend });
  const submit = async <R>(route: string, input: unknown, o: RunOptions = {}, wait = '') => {
    if (schema) await check(schema, input);
    const body = {
      ...o.body,
      input,
      ...(o.webhook ? { webhook: o.webhook } : {}),
      ...(o.webhookEvents ? { webhookEvents: o.webhookEvents } : {}),
      ...(o.policy ? { policy: o.policy } : {}),
      ...(o.token ? { token: o.token } : {}),
    };
    const headers = { 'idempotency-key': o.idempotencyKey ?? newKey() };
    return callJson<R>(t, `${base}/${route}${wait}`, { body, headers, signal: o.signal });
  };
  const job = (jobId: string) => encodeURIComponent(jobId);
  const ep: Endpoint<T> = {
    id,
    run: (input, o) => submit('run', input, o),
    async runSync(input, o) {
      const done = await submit<Job<T['output']>>('runsync', input, o, q(o?.waitMs));
      return TERMINAL.includes(done.status) ? done : ep.wait(done.id, o);
    },
    status: (jobId, o) => get(`/status/${job(jobId)}`, o),
    async wait(jobId, o) {
      for (;;) {
        const j = await get<Job<T['output']>>(`/status-sync/${job(jobId)}${q(o?.waitMs)}`, o);
        if (TERMINAL.includes(j.status)) return j;
      }
    },
    stream: (jobId, o) => streamJob(t, base, job(jobId), o),
    cancel: (jobId, o) => post(`/cancel/${job(jobId)}`, o),
    // A resent /retry whose first try was done would answer 409: only 429/503 (nothing done) are retried.
    retry: (jobId, o) => post(`/retry/${job(jobId)}`, o, false),
    purgeQueue: (o) => post('/purge-queue', o, false),
    health: (o) => get('/health', o),
    logs: (jobId, o) => get(`/logs/${job(jobId)}`, o),
    token: (jobId, o) => post(`/token/${job(jobId)}${tokenQuery(o)}`, o),
    batches: makeBatches(t, base),
  };
  return ep;
}

/** Checks `input` against the endpoint's schema before sending it: a bad one fails like the server would. */
async function check(schema: SchemaLike, input: unknown): Promise<void> {
  const r = (await schema['~standard'].validate(input)) as { issues?: { message: string; path?: unknown[] }[] };
  if (!r.issues) return;
  const details = r.issues.map((i) => ({
    path: (i.path ?? []).map((p) => (p as { key?: unknown })?.key ?? p).join('.'),
    message: i.message,
  }));
  throw new BerthApiError(
    400,
    'invalid_request',
    details.map((d) => `${d.path || 'input'}: ${d.message}`).join('; '),
    details,
  );
}
