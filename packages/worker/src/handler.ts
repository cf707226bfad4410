import type { S3Config } from '@berth/protocol';
import type { Span } from '@opentelemetry/api';
import type { Logger } from './logger.js';

/**
 * The `input` object a client submitted (always a JSON object). Narrow it with `Job<YourInput>`.
 *
 * @example const handler = (job: Job<{ prompt: string }>) => job.input.prompt.length;
 */
export type JobInput = Record<string, unknown>;

/**
 * What a handler receives: its one argument, `handler(job)` (RunPod style). Everything about the job is on it:
 * input, id, attempt, cancellation `signal`, `progress`, `log`, `trace`. (For compatibility the runtime also passes
 * the same object as a second argument; that form is deprecated: see `JobContext`.)
 *
 * @example
 * const handler = async (job: Job<{ prompt: string }>) => {
 *   job.progress({ step: 1 });
 *   const res = await fetch(url, { signal: job.signal, body: job.input.prompt, method: 'POST' });
 *   return { text: await res.text() };
 * };
 */
export interface Job<I = JobInput> {
  /** Job id, e.g. `a2b0...-u1`; `local-test` in local single-shot mode. */
  readonly id: string;
  /** The client's input. */
  readonly input: I;
  /** 1 for the first run; higher when the control plane re-dispatched the job. */
  readonly attempt: number;
  /**
   * Aborted when the job is cancelled, timed out or expired, or when the worker shuts down past its drain
   * deadline. Pass it to fetch/child processes or check `signal.aborted` in loops; whatever the handler returns
   * after that is discarded.
   */
  readonly signal: AbortSignal;
  /**
   * Reports progress (any JSON value). Clients see the latest value in `/status` while the job runs. Ignored
   * after cancellation or once the handler has returned. Throws `TypeError` if the value is not JSON.
   */
  progress(value: unknown): void;
  /** Logger whose lines carry this job's id and attempt, the worker's id and the endpoint's. */
  readonly log: Logger;
  /**
   * The OpenTelemetry span around this handler call (`berth.handler`, child of the control plane's spans of the
   * job), with tracing on (`OTEL_EXPORTER_OTLP_ENDPOINT`); a span that records nothing otherwise. It is also the
   * active context, so spans started with `@opentelemetry/api` inside the handler are its children; set attributes
   * or events on it, or parent spans explicitly with `trace.setSpan(context.active(), job.trace)`.
   */
  readonly trace: Span;
  /** S3 settings the client sent with the job, if any. */
  readonly s3Config?: S3Config;
  /** Epoch ms at which the control plane times the job out, if known. */
  readonly deadline?: number;
}

/**
 * The type of a handler's second argument, which is the very same object as the first (`ctx === job`). Kept so
 * handlers written as `(job, ctx) => ...` still compile and run; it will be removed in a future major version.
 *
 * @deprecated Use the first argument: `(job) => { job.log.info('started'); return job.input; }`. `ctx` is `job`.
 */
export type JobContext<I = JobInput> = Job<I>;

/**
 * What a handler may return: the output (or a promise of it), or for a streaming handler an iterator / async
 * iterable whose items are the chunks and whose return value, if any, is the output. With the default `O =
 * unknown` anything goes.
 */
export type HandlerResult<O = unknown> =
  | O
  | PromiseLike<O>
  // biome-ignore lint/suspicious/noConfusingVoidType: a generator without `return` is typed Generator<T, void>; `undefined` would refuse it
  | Iterator<unknown, O | void>
  // biome-ignore lint/suspicious/noConfusingVoidType: as above, for async generators
  | AsyncIterator<unknown, O | void>
  | AsyncIterable<unknown>;

/**
 * A job handler. Any of these shapes works:
 *
 * - plain or async function: the (awaited) return value is the job's output;
 * - generator or async generator function, or a function returning an iterator / async iterable: every yielded
 *   value is a stream chunk (see `StartOptions.return_aggregate_stream` for the final output).
 *
 * Throwing fails the job with the error's message (`StartOptions.retry` can retry it first; `UnrecoverableError`
 * is never retried). `I` is the input type (inferred from `inputSchema` when the handler is written inline in
 * `start()`), `O` the output type when you want the return value checked.
 *
 * @example
 * const echo: Handler = (job) => job.input;
 * const tokens: Handler<{ prompt: string }> = async function* (job) {
 *   for (const word of job.input.prompt.split(' ')) yield word;
 * };
 * const length: Handler<{ text: string }, { length: number }> = (job) => ({ length: job.input.text.length });
 */
export type Handler<I = any, O = unknown> = (
  job: Job<I>,
  /** @deprecated The same object as `job` (kept for handlers written as `(job, ctx) => ...`); use `job`. */
  ctx: Job<I>,
) => HandlerResult<O>;
