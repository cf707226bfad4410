import type { Span } from '@opentelemetry/api';
import type { OutputTarget } from '../execute/output-target.js';
import { withHandlerSpan } from './handler-span.js';
import { executeWithRetry } from '../execute/retry.js';
import { withConsoleForwarding } from '../logs/console-capture.js';
import type { LogShipper } from '../logs/log-shipper.js';
import type { JobEntry } from './job-entry.js';
import { fetchInput, InputFetchError, uploadOutput } from './blob-transfer.js';
import type { WorkerRuntimeOptions } from './runtime-types.js';

/** What running one assigned job needs. */
export interface RunJobDeps {
  options: Pick<
    WorkerRuntimeOptions,
    'handler' | 'returnAggregateStream' | 'inputSchema' | 'retry' | 'logFormat' | 'tracer' | 'workerId' | 'endpointId'
  >;
  shipper: LogShipper;
  outputTarget: OutputTarget;
  /** The connected server keeps big values as blobs (`welcome.blobs`): big outputs are uploaded. */
  serverBlobs: () => boolean;
}

/**
 * Runs a queued job through the handler (with the retry policy) and records the result on its entry, which sends
 * it. The handler's lines (`job.log` and `console.*`, and a failure's stack) are always forwarded to the control
 * plane and stored with the job (`GET /v2/<ep>/logs/<job_id>`); the runtime's own lifecycle lines (received,
 * completed) stay local: the job object already has those times, and each would cost a write.
 */
export async function runAssignedJob(entry: JobEntry, deps: RunJobDeps): Promise<void> {
  const { options, shipper } = deps;
  entry.state = 'running';
  const started = Date.now();
  const { id, attempt } = entry.spec;
  const handlerLog = shipper.wrap(entry.log, id, attempt);
  const ref = entry.inputBlob;
  if (ref) {
    // A big input kept as a blob: fetched over HTTP and parsed here, so the handler sees `job.input` as always.
    try {
      entry.spec.input = await fetchInput(deps.outputTarget, ref, entry.aborter.signal);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      entry.log.warn('job input not fetched', { error: message, bytes: ref.size });
      // The server could not be reached: the job goes back to the queue; an input that is not JSON fails it.
      return entry.fail(message, { aborted: err instanceof InputFetchError });
    }
  }
  const execute = (span?: Span) =>
    executeWithRetry(
      {
        span,
        handler: options.handler,
        job: { ...entry.spec, outputTarget: deps.outputTarget },
        signal: entry.aborter,
        log: handlerLog,
        returnAggregateStream: options.returnAggregateStream,
        inputSchema: options.inputSchema,
        onChunk: (chunk, index) => entry.chunk(chunk, index),
        onProgress: (value) => entry.progress(value),
      },
      options.retry,
    );
  // JSON logs: a handler's console lines become log lines of the job (jobId, attempt, ...), not bare text.
  const json = options.logFormat === 'json';
  const { tracer } = options;
  const run = tracer
    ? () => withHandlerSpan(tracer, { ...entry.spec, traceparent: entry.traceparent }, options, execute)
    : execute;
  const result = await withConsoleForwarding(
    (level, message) => {
      if (json) entry.log[level](message);
      shipper.add(id, attempt, level, message);
    },
    run,
    json,
  );
  shipper.flush(); // what the handler logged reaches the control plane before its result
  if (result.status === 'COMPLETED') {
    const blob = deps.serverBlobs() ? await uploadOutput(deps.outputTarget, id, attempt, result.output) : undefined;
    entry.complete(result.output, blob);
  } else entry.fail(result.error, { aborted: result.status === 'CANCELLED' });
  const ms = Date.now() - started;
  if (result.status === 'FAILED') entry.log.warn('job failed', { ms, error: result.error });
  else entry.log.info(result.status === 'COMPLETED' ? 'job completed' : 'job aborted', { ms });
}
