import { formatTraceparent, parseTraceparent } from '@berth/protocol/tracing';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { JobRecord } from '../store/types.js';

/** Spans of one job this process is following. */
interface JobSpans {
  /** `berth.job`: from the submit to the terminal state. */
  job: Span;
  /** The context whose span is `job`: the parent of the others. */
  ctx: Context;
  /** `berth.queue_wait`: while the job is queued. */
  queued: Span | undefined;
  /** `berth.run`: from the assignment to a worker to its result (the worker's handler span is its child). */
  run: Span | undefined;
}

/** Jobs followed at most; past it the oldest are closed (a job deleted while queued never reaches a terminal state). */
const MAX_FOLLOWED = 20_000;

/** How a request's W3C `traceparent` is used (`ServerOptions.trustTraceparent`). */
export interface JobTracerOptions {
  /**
   * `true` (default): the request span continues the caller's trace (its child, its sampling decision). `false`: a
   * new root span, sampled by this process's own sampler, with a link to the caller's span, so a caller can neither
   * force sampling nor put the control plane's spans into another trace.
   */
  trustTraceparent?: boolean;
}

/**
 * The control plane's part of a job's trace (OpenTelemetry), made only with tracing on: the HTTP request span of
 * `/run` and `/runsync` (child of the request's W3C `traceparent` when trusted, else a new root linked to it), under
 * it `berth.job` until the
 * job is terminal, holding `berth.queue_wait` while queued and `berth.run` from the assignment to the result, whose
 * `traceparent` goes to the worker in `job.assign`. A requeue closes the run span and opens a new queue wait.
 * Followed in this process only: a job another replica claims, or one left from before a restart, is not traced here.
 */
export class JobTracer {
  private readonly jobs = new Map<string, JobSpans>();

  private readonly trustTraceparent: boolean;

  constructor(
    private readonly tracer: Tracer,
    options: JobTracerOptions = {},
  ) {
    this.trustTraceparent = options.trustTraceparent ?? true;
  }

  /**
   * The span of an HTTP request (`POST /v2/:endpoint/runsync`): continuing the caller's `traceparent` if any and
   * trusted; untrusted, a new root linked to it.
   */
  request(method: string, route: string, headers: Record<string, string | undefined>): { span: Span; ctx: Context } {
    const caller = parseTraceparent(headers['traceparent']);
    const trusted = caller !== undefined && this.trustTraceparent;
    const parent = trusted ? trace.setSpanContext(ROOT_CONTEXT, caller) : ROOT_CONTEXT;
    const span = this.tracer.startSpan(
      `${method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': method, 'http.route': route },
        ...(caller && !trusted ? { root: true, links: [{ context: caller }] } : {}),
      },
      parent,
    );
    return { span, ctx: trace.setSpan(parent, span) };
  }

  /** A job was stored: opens its `berth.job` span (child of `parent`) and its queue wait. */
  queued(job: JobRecord, parent: Context | undefined): void {
    if (this.jobs.has(job.id)) return; // an idempotent replay
    const base = parent ?? ROOT_CONTEXT;
    const span = this.tracer.startSpan(
      'berth.job',
      { attributes: { 'berth.job.id': job.id, 'berth.endpoint.id': job.endpointId, 'berth.job.sync': job.sync } },
      base,
    );
    const ctx = trace.setSpan(base, span);
    this.jobs.set(job.id, { job: span, ctx, queued: this.queueWait(job, ctx), run: undefined });
    if (this.jobs.size > MAX_FOLLOWED) this.forgetOldest();
  }

  /** Claimed for a worker: the queue wait ends, the run span opens; answers its `traceparent` for `job.assign`
   * (a non-recording span, the tracer sampling it out, still carries the trace on). */
  assigned(job: JobRecord, workerId: string): string | undefined {
    const t = this.jobs.get(job.id);
    if (!t) return undefined;
    t.queued?.end();
    t.queued = undefined;
    t.run?.end();
    t.run = this.tracer.startSpan(
      'berth.run',
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          'berth.job.id': job.id,
          'berth.endpoint.id': job.endpointId,
          'berth.worker.id': workerId,
          'berth.job.attempt': job.attempt,
        },
      },
      t.ctx,
    );
    return formatTraceparent(t.run.spanContext());
  }

  /** Back in the queue (its worker was lost or gave it up): the run span ends in error, a new queue wait opens. */
  requeued(job: JobRecord, why: string): void {
    const t = this.jobs.get(job.id);
    if (!t) return;
    t.run?.setStatus({ code: SpanStatusCode.ERROR, message: `requeued: ${why}` });
    t.run?.end();
    t.run = undefined;
    t.queued ??= this.queueWait(job, t.ctx);
  }

  /** The job was not stored after all (an idempotent retry found the first one): its spans are dropped. */
  abandon(id: string): void {
    const t = this.jobs.get(id);
    if (!t) return;
    this.jobs.delete(id);
    for (const span of [t.queued, t.run, t.job]) span?.end();
  }

  /**
   * Terminal: closes every span of the job, with its status. The status message is the job's status, never its
   * `error` (handler text, which may hold input or secrets, stays in the job object and logs).
   */
  finished(job: JobRecord): void {
    const t = this.jobs.get(job.id);
    if (!t) return;
    this.jobs.delete(job.id);
    const failed = job.status !== 'COMPLETED';
    for (const span of [t.queued, t.run, t.job]) {
      if (!span) continue;
      span.setAttribute('berth.job.status', job.status);
      if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: job.status });
      span.end();
    }
  }

  private queueWait(job: JobRecord, ctx: Context): Span {
    return this.tracer.startSpan(
      'berth.queue_wait',
      { attributes: { 'berth.job.id': job.id, 'berth.endpoint.id': job.endpointId } },
      ctx,
    );
  }

  private forgetOldest(): void {
    const [id, t] = this.jobs.entries().next().value as [string, JobSpans];
    this.jobs.delete(id);
    for (const span of [t.queued, t.run, t.job]) span?.end();
  }
}
