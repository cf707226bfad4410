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
  /** `berth.job`, from the submit to the terminal state; none for `/runsync`, whose request span stands for it. */
  job: Span | undefined;
  /** The `/runsync` request span, which gets the job's terminal status (while it is still open). */
  request: Span | undefined;
  /** The context whose span is the job's (`job`, or the request): the parent of the run spans. */
  ctx: Context;
  /** When the job was stored or requeued (`performance.now()`): the next run span's `berth.queue_wait_ms`. */
  queuedAt: number;
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
 * it `berth.job` until the job is terminal (for `/run`; a `/runsync` request span stands for its job), holding
 * `berth.run` from the assignment to the result, with the time the job waited in the queue as `berth.queue_wait_ms`;
 * its `traceparent` goes to the worker in `job.assign`. A requeue closes the run span in error; the next one waits
 * again. Two or three spans per job here (issue #40: five spans cost 86-96 µs of CPU per job on a loaded machine; a
 * queue-wait span and a job span that only repeated the request span's times carried nothing new). Followed in
 * this process only: a job another replica claims, or one left from before a restart, is not traced here.
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

  /** A job was stored: opens its `berth.job` span (child of `parent`), unless the request span of a `/runsync` is its. */
  queued(job: JobRecord, parent: Context | undefined): void {
    if (this.jobs.has(job.id)) return; // an idempotent replay
    const base = parent ?? ROOT_CONTEXT;
    const attributes = { 'berth.job.id': job.id, 'berth.endpoint.id': job.endpointId, 'berth.job.sync': job.sync };
    const request = job.sync && parent ? trace.getSpan(parent) : undefined;
    let span: Span | undefined;
    if (request) request.setAttributes(attributes);
    else span = this.tracer.startSpan('berth.job', { attributes }, base);
    const ctx = span ? trace.setSpan(base, span) : base;
    this.jobs.set(job.id, { job: span, request, ctx, queuedAt: performance.now(), run: undefined });
    if (this.jobs.size > MAX_FOLLOWED) this.forgetOldest();
  }

  /** Claimed for a worker: the run span opens, with the queue wait; answers its `traceparent` for `job.assign`
   * (a non-recording span, the tracer sampling it out, still carries the trace on). */
  assigned(job: JobRecord, workerId: string): string | undefined {
    const t = this.jobs.get(job.id);
    if (!t) return undefined;
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
          'berth.queue_wait_ms': Math.round((performance.now() - t.queuedAt) * 1000) / 1000,
        },
      },
      t.ctx,
    );
    return formatTraceparent(t.run.spanContext());
  }

  /** Back in the queue (its worker was lost or gave it up): the run span ends in error; the queue wait restarts. */
  requeued(job: JobRecord, why: string): void {
    const t = this.jobs.get(job.id);
    if (!t) return;
    t.run?.setStatus({ code: SpanStatusCode.ERROR, message: `requeued: ${why}` });
    t.run?.end();
    t.run = undefined;
    t.queuedAt = performance.now();
  }

  /** The job was not stored after all (an idempotent retry found the first one): its spans are dropped. */
  abandon(id: string): void {
    const t = this.jobs.get(id);
    if (!t) return;
    this.jobs.delete(id);
    t.run?.end();
    t.job?.end();
  }

  /**
   * Terminal: closes the job's spans, with its status (and sets it on a `/runsync` request span still open). The
   * status message is the job's status, never its `error` (handler text, which may hold input or secrets, stays in
   * the job object and logs).
   */
  finished(job: JobRecord): void {
    const t = this.jobs.get(job.id);
    if (!t) return;
    this.jobs.delete(job.id);
    const failed = job.status !== 'COMPLETED';
    for (const span of [t.run, t.job, t.request]) {
      if (!span?.isRecording()) continue;
      span.setAttribute('berth.job.status', job.status);
      if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: job.status });
      if (span !== t.request) span.end(); // the route ends its request span
    }
  }

  private forgetOldest(): void {
    const [id, t] = this.jobs.entries().next().value as [string, JobSpans];
    this.jobs.delete(id);
    t.run?.end();
    t.job?.end();
  }
}
