import type { S3Config } from '@berth/protocol';
import { INVALID_SPAN_CONTEXT, trace, type Span } from '@opentelemetry/api';
import type { Handler, Job } from '../../handler.js';
import type { Logger } from '../../logger.js';
import { UnrecoverableError } from '../../errors.js';
import { errorMessage } from './error-message.js';
import { asStreamSource, isThenable, type StreamSource } from './handler-kind.js';
import { toJsonValue } from './json-value.js';
import { attachOutputTarget, type OutputTarget } from './output-target.js';
import { checkJobInput, type InputSchema } from './input-schema.js';
import { signalOf, type LazyAbort } from './lazy-abort.js';

/** The job fields a handler sees, as dispatched. */
export interface JobSpec {
  id: string;
  input: Record<string, unknown>;
  attempt: number;
  s3Config?: S3Config;
  deadline?: number;
  /** Where `uploadOutput` sends files without S3 (the connected control plane). */
  outputTarget?: OutputTarget;
}

/** `job.trace` with tracing off: a span that records nothing (one for the process). */
export const NO_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Inputs of `executeJob`. */
export interface ExecuteOptions {
  handler: Handler;
  job: JobSpec;
  /**
   * Aborting it cancels the job: the result is then `CANCELLED`, whatever the handler does. A `LazyAbort` makes the
   * handler's `job.signal` only if the handler reads it.
   */
  signal: AbortSignal | LazyAbort;
  /** Logger already tagged with the job id; handed to the handler as `job.log`. */
  log: Logger;
  /** Final output of a streaming handler is the list of chunks even when it returns a value. */
  returnAggregateStream: boolean;
  /** Called once per stream chunk (already JSON-normalised), in order; `index` counts from 0. */
  onChunk?: (chunk: unknown, index: number) => void;
  /** Called for each `job.progress(value)` while the job is live. */
  onProgress?: (value: unknown) => void;
  /** Checked before the handler runs; a mismatch fails the job (unrecoverable) without calling the handler. */
  inputSchema?: InputSchema | undefined;
  /** The handler's span, handed over as `job.trace` (a span that records nothing without). */
  span?: Span | undefined;
}

/** How a job ended. `output` and chunks are JSON values (what the client will see). */
export type JobResult =
  | { status: 'COMPLETED'; output: unknown }
  | { status: 'FAILED'; error: string; unrecoverable: boolean }
  | { status: 'CANCELLED'; error: string };

/**
 * Runs one job through a handler of any kind and reports chunks and progress through callbacks. Never throws.
 * This is the single execution path shared by the live runtime, local test mode and `@berth/worker/testing`.
 *
 * Output rules: a plain handler's return value (`undefined` becomes `null`); for a streaming handler, the list
 * of chunks when `returnAggregateStream` is set or the handler returns nothing, else its return value.
 *
 * @example
 * const result = await executeJob({ handler, job: { id: 'j1', input: {}, attempt: 1 }, signal, log,
 *   returnAggregateStream: false, onChunk: (c, i) => send(c, i) });
 */
export async function executeJob(options: ExecuteOptions): Promise<JobResult> {
  const { signal, log } = options;
  if (options.inputSchema) {
    const checked = checkJobInput(options.inputSchema, options.job.input);
    if (!checked.ok) {
      log.warn('input refused by the input schema', { error: checked.error });
      return { status: 'FAILED', error: checked.error, unrecoverable: true };
    }
    options = { ...options, job: { ...options.job, input: checked.input } };
  }
  let live = true;
  const job = createJob(options, () => live);
  try {
    if (signal.aborted) return cancelled(signal);
    let value: unknown = options.handler(job, job);
    if (isThenable(value)) value = await value;
    const source = asStreamSource(value);
    const output = source ? await drain(source, options) : value === undefined ? null : toJsonValue(value, 'output');
    if (signal.aborted) return cancelled(signal);
    return { status: 'COMPLETED', output };
  } catch (err) {
    if (signal.aborted) return cancelled(signal);
    const error = errorMessage(err);
    log.error('handler failed', { error, stack: err instanceof Error ? err.stack : undefined });
    return { status: 'FAILED', error, unrecoverable: err instanceof UnrecoverableError };
  } finally {
    live = false;
  }
}

function createJob(options: ExecuteOptions, isLive: () => boolean): Job {
  const { job: spec, signal, log, onProgress } = options;
  const job: { -readonly [K in keyof Job]: Job[K] } = {
    id: spec.id,
    input: spec.input,
    attempt: spec.attempt,
    get signal() {
      return signalOf(signal);
    },
    log,
    trace: options.span ?? NO_SPAN,
    progress(value: unknown): void {
      const json = toJsonValue(value, 'progress');
      if (!isLive() || signal.aborted) {
        log.debug('progress ignored: the job is no longer running');
        return;
      }
      onProgress?.(json);
    },
  };
  if (spec.s3Config !== undefined) job.s3Config = spec.s3Config;
  if (spec.deadline !== undefined) job.deadline = spec.deadline;
  attachOutputTarget(job, spec.outputTarget);
  return job;
}

/** Pulls every chunk of a stream; returns the final output. Stops early (closing the iterator) on abort. */
async function drain(source: StreamSource, options: ExecuteOptions): Promise<unknown> {
  const { signal, onChunk } = options;
  const chunks: unknown[] = [];
  const it = source.iterator;
  let returned: unknown;
  try {
    for (;;) {
      if (signal.aborted) {
        await close(it);
        return null;
      }
      const step = source.kind === 'async' ? await source.iterator.next() : source.iterator.next();
      if (step.done) {
        returned = step.value;
        break;
      }
      const raw = source.kind === 'sync' && isThenable(step.value) ? await step.value : step.value;
      const chunk = toJsonValue(raw, `stream chunk ${chunks.length}`);
      if (signal.aborted) continue;
      chunks.push(chunk);
      onChunk?.(chunk, chunks.length - 1);
      // A sync generator would otherwise run to the end in one tick: let sockets and cancels through.
      if (source.kind === 'sync') await new Promise((resolve) => setImmediate(resolve));
    }
  } catch (err) {
    await close(it);
    throw err;
  }
  if (options.returnAggregateStream || returned === undefined) return chunks;
  return toJsonValue(returned, 'output');
}

async function close(it: Iterator<unknown, unknown> | AsyncIterator<unknown, unknown>): Promise<void> {
  try {
    await it.return?.();
  } catch {
    // the generator's own cleanup failed; the job result is already decided
  }
}

function cancelled(signal: { readonly reason: unknown }): JobResult {
  const reason: unknown = signal.reason;
  const why = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'cancelled';
  return { status: 'CANCELLED', error: why };
}
