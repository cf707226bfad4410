import { ConfigError, describeValue, ENDPOINT_ID_RE, LIMITS, WORKER_WS_PATH } from '@berth/protocol';
import type { z } from 'zod';
import type { BatchHandler, BatchOptions } from './batch.js';
import type { Handler } from './handler.js';
import { isLogLevel, type LogFormat, type LogLevel } from './logger.js';
import { isLogFormat } from '@berth/protocol/log';
import { isStreamingHandler } from './internal/execute/handler-kind.js';
import { WORKER_ID_RE, defaultWorkerId } from './internal/transport/worker-id.js';
import { isInputSchema, type InputSchema } from './internal/execute/input-schema.js';
import { NO_RETRY, type RetryPolicy } from './internal/execute/retry.js';
import type { BackoffOptions } from './internal/transport/backoff.js';
import { Batcher, type ResolvedBatch } from './internal/batch/batcher.js';

/**
 * Options of `start()`. Environment variables override the values given in code, so the same image can be tuned
 * per deployment. The connection itself is configured only through the environment:
 *
 * - `BERTH_URL`: `http(s)://host:port` of the control plane (also `ws(s)://`). Unset: local single-shot mode.
 * - `BERTH_ENDPOINT_ID`: the endpoint this worker serves (required with `BERTH_URL`).
 * - `BERTH_WORKER_TOKEN`: worker token, sent as `Authorization: Bearer <token>` (required with `BERTH_URL`).
 * - `BERTH_WORKER_ID`: this worker's id. Default `<hostname>-<pid>-<random4>`.
 *
 * `S` is the input schema's type: with `inputSchema` set, the handler's `job.input` is the schema's output type
 * (inferred, as trpc infers a procedure's input); without it, `job.input` is untyped (`any`) unless the handler
 * declares it (`Handler<MyInput>`). `O` is the handler's declared output type (default: anything).
 *
 * @example
 * start({ handler: async (job) => ({ echo: job.input }), concurrency: 4 });
 * start({ inputSchema: z.object({ name: z.string() }), handler: (job) => `hello ${job.input.name}` }); // name: string
 */
export type StartOptions<S extends InputSchema | undefined = InputSchema | undefined, O = unknown> =
  | JobStartOptions<S, O>
  | BatchStartOptions<S, O>;

/** `StartOptions` with a per-job handler (no `batch`). */
export interface JobStartOptions<S extends InputSchema | undefined = InputSchema | undefined, O = unknown>
  extends CommonStartOptions<S> {
  /** The job handler (plain, async, generator or async generator function). Required. */
  handler: Handler<InputOf<S>, O>;
  batch?: undefined;
}

/**
 * `StartOptions` with a batch handler: the runtime collects jobs into batches and calls `handler(jobs)` once per
 * batch (docs/batching.md).
 *
 * @example start({ batch: { maxSize: 16, maxWaitMs: 10 }, handler: async (jobs) => jobs.map((j) => j.input) });
 */
export interface BatchStartOptions<S extends InputSchema | undefined = InputSchema | undefined, O = unknown>
  extends CommonStartOptions<S> {
  /** Batching settings: `maxSize` (required) and `maxWaitMs` (default 10). */
  batch: BatchOptions;
  /** The batch handler: gets up to `batch.maxSize` jobs, returns their outputs in order (or yields `{ index, chunk }`). */
  handler: BatchHandler<InputOf<S>, O>;
}

/** The options of `start()` besides the handler. */
export interface CommonStartOptions<S extends InputSchema | undefined = InputSchema | undefined> {
  /**
   * Make the final output of a streaming handler the list of all yielded chunks, even when the handler returns a
   * value. Without it, the output is the generator's return value, or the list of chunks when it returns nothing.
   * Setting it also announces the worker as streaming. Default `false`.
   */
  return_aggregate_stream?: boolean;
  /**
   * How many jobs run at once (1-1024). Default `1`, or `batch.maxSize` with a batch handler (a set value must then
   * be at least `batch.maxSize`). Env `BERTH_CONCURRENCY` overrides it.
   */
  concurrency?: number;
  /**
   * Called after each job finishes with the current concurrency; returns the concurrency to use from now on
   * (0-1024; 0 takes no new jobs). A change is announced to the control plane. Default: none (fixed concurrency).
   */
  concurrencyModifier?: (current: number) => number;
  /** A label for this worker, printed in the startup log line. Default: none. */
  name?: string;
  /**
   * On SIGTERM/SIGINT, how long running jobs may take to finish before they are aborted, in ms.
   * Default `30000`. Env `BERTH_DRAIN_TIMEOUT_MS` overrides it.
   */
  drainTimeoutMs?: number;
  /** Lowest log level printed: debug, info, warn, error, silent. Default `info`. Env `BERTH_LOG_LEVEL` overrides it. */
  logLevel?: LogLevel;
  /**
   * Log lines as `json` (pino's JSON lines: `jobId`, `endpointId`, `workerId`, `attempt` on every job line; a
   * handler's `console` output inside a job becomes such a line too) or `pretty` (`12:00:01 info  msg key=value`).
   * Default: `json`, or `pretty` when stderr is a terminal. Env `BERTH_LOG_FORMAT` overrides it.
   */
  logFormat?: LogFormat;
  /**
   * A zod (v4) object schema of the input. Jobs that do not match fail before the handler runs, with
   * `invalid_input: <path>: <problem>`; the handler gets the parsed input (defaults applied). The worker announces
   * it as JSON Schema, so the playground builds a form from it. Default: none (any JSON object).
   */
  inputSchema?: S;
  /**
   * Retry a handler that throws, in the worker, before the job fails: `attempts` tries in all (1-100), the first
   * retry after `backoffMs` (0-3600000, default `1000`), doubled before each next one. Never retried: an
   * `UnrecoverableError`, an input the `inputSchema` refuses, a cancelled or timed-out job (the execution timeout
   * runs across the tries), a streaming job that already sent a chunk. Default: no retries. Env
   * `BERTH_RETRY_ATTEMPTS` and `BERTH_RETRY_BACKOFF_MS` override it.
   *
   * @example start({ handler, retry: { attempts: 3, backoffMs: 500 } }) // tries at 0 s, 0.5 s and 1.5 s
   */
  retry?: RetryOptions;
}

/** `StartOptions.retry`. */
export interface RetryOptions {
  /** Tries in all, the first included (1-100). `1` means no retry. */
  attempts: number;
  /** Wait before the first retry in ms, doubled before each next one (0-3600000). Default `1000`. */
  backoffMs?: number;
}

/** The handler's input type for an input schema `S`: the schema's output (defaults applied), else `any`. */
// `any`, not `JobInput`: handlers written before input schemas (`(job: Job<{ prompt: string }>) => ...`) stay valid.
export type InputOf<S extends InputSchema | undefined> = S extends InputSchema ? z.output<S> : any;

/** Where and how to reach the control plane. */
export interface ResolvedConnection {
  /** Full `ws(s)://host:port/v2/_worker/ws` URL. */
  url: string;
  endpointId: string;
  token: string;
}

/** `StartOptions` with every default applied and the environment read. */
export interface ResolvedStartOptions {
  handler: Handler;
  returnAggregateStream: boolean;
  /** Announced in `hello.stream`: a generator handler, or `return_aggregate_stream`. */
  stream: boolean;
  concurrency: number;
  concurrencyModifier: ((current: number) => number) | undefined;
  name: string | undefined;
  drainTimeoutMs: number;
  logLevel: LogLevel;
  logFormat: LogFormat;
  inputSchema: InputSchema | undefined;
  retry: RetryPolicy;
  /** With a batch handler: the batcher (its `handler` is the per-job `handler` above; announced in `hello.batch`). */
  batcher: Batcher | undefined;
  workerId: string;
  /** Undefined when `BERTH_URL` is not set (local mode). */
  connection: ResolvedConnection | undefined;
  /** Connection and shutdown timings no option sets (tests shorten them). */
  timings: RuntimeTimings;
}

/** Timings of the connected runtime. */
export interface RuntimeTimings {
  /** Reconnect backoff: 250 ms doubling to 5 s, jittered. */
  reconnect: BackoffOptions;
  /** Time from dialing to `welcome`. */
  handshakeTimeoutMs: number;
  /** After the drain deadline hands running jobs back, how long to wait for the control plane to acknowledge them. */
  abortGraceMs: number;
}

export { ConfigError };

const DEFAULT_CONCURRENCY = 1;
const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;
const DEFAULT_RETRY_BACKOFF_MS = 1_000;
const MAX_RETRY_ATTEMPTS = 100;
const MAX_RETRY_BACKOFF_MS = 3600_000;
const MAX_DRAIN_TIMEOUT_MS = 7 * 24 * 3600_000;
const DEFAULT_BATCH_WAIT_MS = 10;
const MAX_BATCH_WAIT_MS = 60_000;
/** Highest concurrency, as the wire allows it (`hello.concurrency`). */
export const MAX_CONCURRENCY = LIMITS.workerConcurrencyMax;
export const DEFAULT_TIMINGS: RuntimeTimings = {
  reconnect: { initialMs: 250, maxMs: 5_000 },
  handshakeTimeoutMs: 10_000,
  abortGraceMs: 2_000,
};

/**
 * Applies defaults and environment overrides; throws `ConfigError` naming the bad option or variable.
 *
 * @example const resolved = resolveStartOptions({ handler }, process.env);
 */
export function resolveStartOptions(options: StartOptions, env: NodeJS.ProcessEnv): ResolvedStartOptions {
  if (typeof options !== 'object' || options === null)
    throw new ConfigError('start() needs an options object: start({ handler })');
  if (typeof options.handler !== 'function')
    throw new ConfigError(`handler must be a function (got ${describeValue(options.handler)})`);
  const aggregate = options.return_aggregate_stream ?? false;
  if (typeof aggregate !== 'boolean')
    throw new ConfigError(`return_aggregate_stream must be a boolean (got ${describeValue(aggregate)})`);
  const batch = resolveBatch(options.batch, env);
  const batcher = batch
    ? new Batcher(options.handler as BatchHandler, batch, aggregate || isStreamingHandler(options.handler))
    : undefined;
  const handler = batcher ? batcher.handler : (options.handler as Handler);
  const modifier = options.concurrencyModifier;
  if (modifier !== undefined && typeof modifier !== 'function') {
    throw new ConfigError(`concurrencyModifier must be a function (got ${describeValue(modifier)})`);
  }
  if (options.inputSchema !== undefined && !isInputSchema(options.inputSchema)) {
    throw new ConfigError(
      `inputSchema must be a zod schema such as z.object({ prompt: z.string() }) (got ${describeValue(options.inputSchema)})`,
    );
  }
  if (options.name !== undefined && typeof options.name !== 'string')
    throw new ConfigError(`name must be a string (got ${describeValue(options.name)})`);

  const concurrency =
    fromEnvInt(env, 'BERTH_CONCURRENCY', 1, MAX_CONCURRENCY) ??
    checkInt(options.concurrency, 'concurrency', 1, MAX_CONCURRENCY) ??
    batch?.maxSize ??
    DEFAULT_CONCURRENCY;
  if (batch && concurrency < batch.maxSize) {
    throw new ConfigError(
      `concurrency (${concurrency}) must be at least batch.maxSize (${batch.maxSize}): a batch holds at most concurrency jobs`,
    );
  }
  const drainTimeoutMs =
    fromEnvInt(env, 'BERTH_DRAIN_TIMEOUT_MS', 0, MAX_DRAIN_TIMEOUT_MS) ??
    checkInt(options.drainTimeoutMs, 'drainTimeoutMs', 0, MAX_DRAIN_TIMEOUT_MS) ??
    DEFAULT_DRAIN_TIMEOUT_MS;
  const logLevel = resolveLogLevel(options.logLevel, envValue(env, 'BERTH_LOG_LEVEL'));
  const logFormat = resolveLogFormat(options.logFormat, envValue(env, 'BERTH_LOG_FORMAT'));

  const workerIdEnv = envValue(env, 'BERTH_WORKER_ID');
  if (workerIdEnv !== undefined && !WORKER_ID_RE.test(workerIdEnv)) {
    throw new ConfigError(
      `BERTH_WORKER_ID must be 1-128 characters of A-Z a-z 0-9 . _ : - (got ${JSON.stringify(workerIdEnv)})`,
    );
  }

  return {
    handler,
    returnAggregateStream: aggregate,
    stream: aggregate || isStreamingHandler(options.handler),
    concurrency,
    concurrencyModifier: modifier,
    name: options.name,
    drainTimeoutMs,
    logLevel,
    logFormat,
    inputSchema: options.inputSchema,
    retry: resolveRetry(options.retry, env),
    batcher,
    workerId: workerIdEnv ?? defaultWorkerId(),
    connection: resolveConnection(env),
    timings: DEFAULT_TIMINGS,
  };
}

function resolveRetry(retry: RetryOptions | undefined, env: NodeJS.ProcessEnv): RetryPolicy {
  if (retry !== undefined && (typeof retry !== 'object' || retry === null)) {
    throw new ConfigError(
      `retry must be an object such as { attempts: 3, backoffMs: 1000 } (got ${describeValue(retry)})`,
    );
  }
  const attempts =
    fromEnvInt(env, 'BERTH_RETRY_ATTEMPTS', 1, MAX_RETRY_ATTEMPTS) ??
    checkInt(retry?.attempts, 'retry.attempts', 1, MAX_RETRY_ATTEMPTS) ??
    NO_RETRY.attempts;
  const backoffMs =
    fromEnvInt(env, 'BERTH_RETRY_BACKOFF_MS', 0, MAX_RETRY_BACKOFF_MS) ??
    checkInt(retry?.backoffMs, 'retry.backoffMs', 0, MAX_RETRY_BACKOFF_MS) ??
    DEFAULT_RETRY_BACKOFF_MS;
  if (retry !== undefined && retry.attempts === undefined && envValue(env, 'BERTH_RETRY_ATTEMPTS') === undefined) {
    throw new ConfigError('retry.attempts must be set: the number of tries in all, e.g. retry: { attempts: 3 }');
  }
  return attempts === 1 ? NO_RETRY : { attempts, backoffMs };
}

function resolveBatch(batch: BatchOptions | undefined, env: NodeJS.ProcessEnv): ResolvedBatch | undefined {
  if (batch === undefined) return undefined;
  if (typeof batch !== 'object' || batch === null) {
    throw new ConfigError(
      `batch must be an object such as { maxSize: 16, maxWaitMs: 10 } (got ${describeValue(batch)})`,
    );
  }
  if (batch.maxSize === undefined && envValue(env, 'BERTH_BATCH_MAX_SIZE') === undefined)
    throw new ConfigError('batch.maxSize must be set: the most jobs in one handler call, e.g. batch: { maxSize: 16 }');
  const maxSize =
    fromEnvInt(env, 'BERTH_BATCH_MAX_SIZE', 1, MAX_CONCURRENCY) ??
    (checkInt(batch.maxSize, 'batch.maxSize', 1, MAX_CONCURRENCY) as number);
  const maxWaitMs =
    fromEnvInt(env, 'BERTH_BATCH_MAX_WAIT_MS', 0, MAX_BATCH_WAIT_MS) ??
    checkInt(batch.maxWaitMs, 'batch.maxWaitMs', 0, MAX_BATCH_WAIT_MS) ??
    DEFAULT_BATCH_WAIT_MS;
  return { maxSize, maxWaitMs };
}

function resolveConnection(env: NodeJS.ProcessEnv): ResolvedConnection | undefined {
  const raw = envValue(env, 'BERTH_URL');
  if (raw === undefined) return undefined;
  const url = workerSocketUrl(raw);
  const endpointId = envValue(env, 'BERTH_ENDPOINT_ID');
  if (endpointId === undefined)
    throw new ConfigError('BERTH_ENDPOINT_ID must be set when BERTH_URL is set (the endpoint this worker serves)');
  if (!ENDPOINT_ID_RE.test(endpointId)) {
    throw new ConfigError(`BERTH_ENDPOINT_ID must match ${ENDPOINT_ID_RE.source} (got ${JSON.stringify(endpointId)})`);
  }
  const token = envValue(env, 'BERTH_WORKER_TOKEN');
  if (token === undefined)
    throw new ConfigError(
      'BERTH_WORKER_TOKEN must be set when BERTH_URL is set (the worker token of the control plane)',
    );
  return { url, endpointId, token };
}

/**
 * Turns the control plane's base URL into the worker WebSocket URL, keeping any path prefix.
 *
 * @example workerSocketUrl('https://berth.example.com') // 'wss://berth.example.com/v2/_worker/ws'
 */
export function workerSocketUrl(base: string): string {
  let u: URL;
  try {
    u = new URL(base);
  } catch {
    throw new ConfigError(`BERTH_URL must be a URL like http://127.0.0.1:8080 (got ${JSON.stringify(base)})`);
  }
  const protocols: Record<string, string> = { 'http:': 'ws:', 'https:': 'wss:', 'ws:': 'ws:', 'wss:': 'wss:' };
  const protocol = protocols[u.protocol];
  if (protocol === undefined)
    throw new ConfigError(`BERTH_URL must start with http://, https://, ws:// or wss:// (got ${JSON.stringify(base)})`);
  u.protocol = protocol;
  u.pathname = `${u.pathname.replace(/\/+$/, '')}${WORKER_WS_PATH}`;
  u.search = '';
  u.hash = '';
  return u.toString();
}

function resolveLogLevel(fromCode: LogLevel | undefined, fromEnv: string | undefined): LogLevel {
  if (fromEnv !== undefined) {
    const lower = fromEnv.toLowerCase();
    if (!isLogLevel(lower))
      throw new ConfigError(
        `BERTH_LOG_LEVEL must be one of debug, info, warn, error, silent (got ${JSON.stringify(fromEnv)})`,
      );
    return lower;
  }
  if (fromCode === undefined) return 'info';
  if (typeof fromCode !== 'string' || !isLogLevel(fromCode)) {
    throw new ConfigError(`logLevel must be one of debug, info, warn, error, silent (got ${describeValue(fromCode)})`);
  }
  return fromCode;
}

function resolveLogFormat(fromCode: unknown, fromEnv: string | undefined): LogFormat {
  if (fromEnv !== undefined) {
    if (!isLogFormat(fromEnv))
      throw new ConfigError(`BERTH_LOG_FORMAT must be json or pretty (got ${JSON.stringify(fromEnv)})`);
    return fromEnv;
  }
  if (fromCode === undefined) return process.stderr.isTTY ? 'pretty' : 'json';
  if (typeof fromCode !== 'string' || !isLogFormat(fromCode))
    throw new ConfigError(`logFormat must be json or pretty (got ${describeValue(fromCode)})`);
  return fromCode;
}

function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

function fromEnvInt(env: NodeJS.ProcessEnv, name: string, min: number, max: number): number | undefined {
  const raw = envValue(env, name);
  if (raw === undefined) return undefined;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(raw)})`);
  }
  return n;
}

function checkInt(value: unknown, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max} (got ${describeValue(value)})`);
  }
  return value;
}
