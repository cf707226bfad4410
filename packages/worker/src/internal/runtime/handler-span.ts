import { parseTraceparent } from '@berth/protocol/tracing';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { JobResult } from '../execute/execute.js';

/** What the handler span is made from: the job's ids and the `traceparent` its `job.assign` carried. */
export interface HandlerSpanJob {
  id: string;
  attempt: number;
  traceparent?: string | undefined;
}

/**
 * Runs `fn` (the handler, with its retries) inside a `berth.handler` span, child of the control plane's run span
 * through the assignment's `traceparent` (a new root without one), as the active context: spans user code starts
 * (with `job.trace` or the active context) are its children. The result closes it.
 */
export async function withHandlerSpan(
  tracer: Tracer,
  job: HandlerSpanJob,
  ids: { workerId: string; endpointId: string },
  fn: (span: Span) => Promise<JobResult>,
): Promise<JobResult> {
  const from = parseTraceparent(job.traceparent);
  const parent = from ? trace.setSpanContext(ROOT_CONTEXT, from) : ROOT_CONTEXT;
  const span = tracer.startSpan(
    'berth.handler',
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'berth.job.id': job.id,
        'berth.job.attempt': job.attempt,
        'berth.worker.id': ids.workerId,
        'berth.endpoint.id': ids.endpointId,
      },
    },
    parent,
  );
  try {
    const result = await context.with(trace.setSpan(parent, span), () => fn(span));
    span.setAttribute('berth.job.status', result.status);
    if (result.status !== 'COMPLETED') span.setStatus({ code: SpanStatusCode.ERROR, message: result.error });
    return result;
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}
