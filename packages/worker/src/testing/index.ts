import type { S3Config } from '@berth/protocol';
import type { z } from 'zod';
import type { Handler, JobInput } from '../handler.js';
import { createLogger, type LogRecord } from '../logger.js';
import { executeWithRetry, NO_RETRY } from '../internal/execute/retry.js';
import type { RetryOptions } from '../options.js';
import type { InputSchema } from '../internal/execute/input-schema.js';

/**
 * Options of `runJob`.
 *
 * @example await runJob(handler, input, { signal: AbortSignal.timeout(100), return_aggregate_stream: true })
 */
export interface RunJobOptions {
  /** Abort it to cancel the job, as a server cancel would. */
  signal?: AbortSignal;
  /** Same as `StartOptions.return_aggregate_stream`. Default `false`. */
  return_aggregate_stream?: boolean;
  /** `job.id`. Default `test-job`. */
  id?: string;
  /** `job.attempt`. Default 1. */
  attempt?: number;
  /** `job.s3Config`. */
  s3Config?: S3Config;
  /** Same as `StartOptions.inputSchema`: a mismatching input fails the job before the handler runs. */
  inputSchema?: InputSchema;
  /** Same as `StartOptions.retry` (default `backoffMs` 0 here, so tests stay fast). Default: no retries. */
  retry?: RetryOptions;
}

/**
 * How a job run by `runJob` ended; values are what a client would receive (JSON-normalised).
 *
 * @example const { status, output, chunks } = await runJob(handler, { prompt: 'hi' });
 */
export interface RunJobResult {
  status: 'COMPLETED' | 'FAILED' | 'CANCELLED';
  /** Present when COMPLETED. */
  output?: unknown;
  /** Present when FAILED or CANCELLED. */
  error?: string;
  /** Every stream chunk, in order. */
  chunks: unknown[];
  /** Every progress value, in order. */
  progress: unknown[];
  /** Everything the handler (and the runtime, for this job) logged. */
  logs: LogRecord[];
}

/**
 * Runs a handler on one input exactly as the worker runtime does (same execution code: handler kinds, streaming,
 * output rules, error messages, cancellation), without a control plane.
 *
 * @example
 * import { runJob } from '@berth/worker/testing';
 * const result = await runJob(handler, { prompt: 'hi' });
 * expect(result).toMatchObject({ status: 'COMPLETED', output: { text: 'hi' } });
 * // With `inputSchema`, `input` is typed as what a client sends (the schema's input side):
 * await runJob(handler, { name: 'x' }, { inputSchema: Input });
 */
export async function runJob<S extends InputSchema>(
  handler: Handler<z.output<S>>,
  input: z.input<S>,
  options: RunJobOptions & { inputSchema: S },
): Promise<RunJobResult>;
export async function runJob<I = JobInput>(
  handler: Handler<I>,
  input: I,
  options?: RunJobOptions,
): Promise<RunJobResult>;
export async function runJob(handler: Handler, input: JobInput, options: RunJobOptions = {}): Promise<RunJobResult> {
  const chunks: unknown[] = [];
  const progress: unknown[] = [];
  const logs: LogRecord[] = [];
  const id = options.id ?? 'test-job';
  const retry = options.retry
    ? { attempts: options.retry.attempts, backoffMs: options.retry.backoffMs ?? 0 }
    : NO_RETRY;
  const result = await executeWithRetry(
    {
      handler,
      job: {
        id,
        input,
        attempt: options.attempt ?? 1,
        ...(options.s3Config !== undefined ? { s3Config: options.s3Config } : {}),
      },
      signal: options.signal ?? new AbortController().signal,
      log: createLogger({
        level: 'debug',
        bindings: { workerId: 'test', jobId: id },
        sink: (record) => logs.push(record),
      }),
      returnAggregateStream: options.return_aggregate_stream ?? false,
      inputSchema: options.inputSchema,
      onChunk: (chunk) => chunks.push(chunk),
      onProgress: (value) => progress.push(value),
    },
    retry,
  );
  if (result.status === 'COMPLETED') return { status: 'COMPLETED', output: result.output, chunks, progress, logs };
  return { status: result.status, error: result.error, chunks, progress, logs };
}

export type { LogRecord } from '../logger.js';
