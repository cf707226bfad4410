import { LbMetrics } from '../lb/lb-metrics.js';
import type { EndpointCounts, JobRecord } from '../store/types.js';
import type { WorkerRegistry } from '../workers/worker-registry.js';
import { BATCH_BUCKETS, TIME_BUCKETS_MS } from './histogram.js';
import { httpMetrics } from './http-metrics.js';
import { processMetrics } from './process-metrics.js';
import { Registry, type Sample, type Scope } from './registry.js';
import { ScalerMetrics } from './scaler-metrics.js';

/** What one scrape reads besides the counters kept here. */
export interface MetricsSource {
  endpoints(): string[];
  counts(endpointId: string): Promise<EndpointCounts>;
  registry: WorkerRegistry;
  heartbeatMs: number;
  /** With several replicas on one store: this replica's id (the `replica` label of per-replica families). */
  replicaId?: string | undefined;
}

/**
 * Control-plane metrics in the Prometheus text format (`GET /metrics`; every family in docs/observability.md).
 * Job and queue figures come from the store at scrape time (so they survive restarts and agree with `/health`
 * on every replica), worker gauges from the shared presence; time histograms, cold starts, HTTP, webhook,
 * rate-limit and process figures are counted by this process since it started (per replica).
 *
 * To add a metric: register it in the constructor (`registry.counter`, `.histogram` or `.collected`), keep the
 * handle in a field, document it in docs/observability.md (a test checks every family is there).
 */
export class Metrics {
  readonly registry: Registry;
  private readonly terminal;
  private readonly delay;
  private readonly execution;
  private readonly coldStarts;
  private readonly batchSize;
  private readonly webhooks;
  private readonly rateLimited;
  private readonly process: { stop(): void };
  /** Wraps the socket-free API: counts and times every request (`berth_http_*`). */
  readonly observeHttp;
  /** Worker cold starts and start failures reported by a scaler (`berth serve --scale`). */
  readonly scaler: ScalerMetrics;
  /** Load-balancing endpoints' requests and cold starts (`lb/`). */
  readonly lb: LbMetrics;

  constructor(src: MetricsSource) {
    const r = (this.registry = new Registry(src.replicaId));
    const perEndpoint =
      (fn: (ep: string, c: EndpointCounts) => Sample[]) => async (scope: Scope, memo: Map<string, unknown>) =>
        (await countsOf(src, scope, memo)).flatMap(([ep, c]) => fn(ep, c));
    const stored = (help: string, name: string, field: 'completed' | 'failed' | 'retried') =>
      r.collected(
        'counter',
        { name, help, labels: ['endpoint'] },
        perEndpoint((ep, c) => [{ labels: [ep], value: c[field] }]),
      );
    r.collected(
      'gauge',
      {
        name: 'berth_jobs',
        help: 'Jobs held now, by endpoint and state (IN_QUEUE, IN_PROGRESS).',
        labels: ['endpoint', 'state'],
      },
      perEndpoint((ep, c) => [
        { labels: [ep, 'IN_QUEUE'], value: c.inQueue },
        { labels: [ep, 'IN_PROGRESS'], value: c.inProgress },
      ]),
    );
    r.collected(
      'gauge',
      { name: 'berth_queue_depth', help: 'Jobs waiting for a worker, by endpoint.', labels: ['endpoint'] },
      perEndpoint((ep, c) => [{ labels: [ep], value: c.inQueue }]),
    );
    stored(
      'Jobs completed, by endpoint (stored counter, survives restarts).',
      'berth_jobs_completed_total',
      'completed',
    );
    stored('Jobs failed, by endpoint (stored counter, survives restarts).', 'berth_jobs_failed_total', 'failed');
    stored('Jobs sent back to the queue (retry or requeue), by endpoint.', 'berth_jobs_retried_total', 'retried');
    this.terminal = r.counter({
      name: 'berth_jobs_finished_total',
      help: 'Jobs that reached a terminal state in this process, by endpoint and state.',
      labels: ['endpoint', 'state'],
      perReplica: true,
    });
    const timeHistogram = (name: string, help: string) =>
      r.histogram({ name, help, labels: ['endpoint'], perReplica: true }, TIME_BUCKETS_MS, 1000);
    this.delay = timeHistogram('berth_job_delay_seconds', 'Time from submit (or retry) to a worker starting the job.');
    this.execution = timeHistogram('berth_job_execution_seconds', 'Time from start to the terminal state.');
    r.collected(
      'gauge',
      {
        name: 'berth_workers',
        help: 'Workers by endpoint and state, on every replica (as /health reports them).',
        labels: ['endpoint', 'state'],
      },
      (scope) => {
        const now = performance.now();
        return shownEndpoints(src, scope).flatMap((ep) =>
          Object.entries(src.registry.health(ep, now, src.heartbeatMs)).map(([state, n]) => ({
            labels: [ep, state],
            value: n,
          })),
        );
      },
    );
    this.coldStarts = r.counter({
      name: 'berth_worker_cold_starts_total',
      help: 'Workers whose first job was queued before they connected (a job waited for a worker to start), by endpoint.',
      labels: ['endpoint'],
      perReplica: true,
    });
    this.batchSize = r.histogram(
      {
        name: 'berth_batch_size',
        help: 'Jobs per batch that batch handlers started, by endpoint.',
        labels: ['endpoint'],
        perReplica: true,
      },
      BATCH_BUCKETS,
      1,
    );
    this.webhooks = r.counter({
      name: 'berth_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome (delivered, retrying, failed).',
      labels: ['outcome'],
      perReplica: true,
    });
    for (const outcome of ['delivered', 'retrying', 'failed']) this.webhooks.of(outcome);
    this.rateLimited = r.counter({
      name: 'berth_rate_limited_total',
      help: 'Requests refused with 429, by endpoint and operation.',
      labels: ['endpoint', 'operation'],
      perReplica: true,
    });
    this.scaler = new ScalerMetrics(r);
    this.lb = new LbMetrics(r, this.scaler);
    this.observeHttp = httpMetrics(r);
    this.process = processMetrics(r);
  }

  /** A job reached a terminal state: its delay and execution times, by endpoint. */
  jobFinished(job: JobRecord): void {
    this.terminal.labels(job.endpointId, job.status).inc();
    if (job.startedAt === undefined) return;
    this.delay.of(job.endpointId).observe(job.startedAt - job.queuedAt);
    if (job.finishedAt !== undefined) this.execution.of(job.endpointId).observe(job.finishedAt - job.startedAt);
  }

  /** A worker's first job had been queued before the worker connected. */
  coldStart(endpointId: string): void {
    this.coldStarts.of(endpointId).inc();
  }

  webhookAttempt(outcome: string): void {
    this.webhooks.of(outcome).inc();
  }

  /** A batch handler started a batch of `size` jobs (docs/batching.md). */
  batchStarted(endpointId: string, size: number): void {
    this.batchSize.of(endpointId).observe(size);
  }

  rateLimitRejected(endpointId: string, operation: string): void {
    this.rateLimited.labels(endpointId, operation).inc();
  }

  /**
   * The scrape. `scope`: the endpoints the caller's key may see (`null`: all); lines of other endpoints are left
   * out, and so are the families that are not per endpoint (HTTP, process, webhooks).
   */
  render(scope: Scope = null): Promise<string> {
    return this.registry.render(scope);
  }

  stop(): void {
    this.process.stop();
  }
}

type Counts = (readonly [string, EndpointCounts])[];

/** The store counts of the endpoints in scope, read once per scrape (several families use them). */
function countsOf(src: MetricsSource, scope: Scope, memo: Map<string, unknown>): Promise<Counts> {
  let p = memo.get('counts') as Promise<Counts> | undefined;
  if (!p)
    memo.set(
      'counts',
      (p = Promise.all(shownEndpoints(src, scope).map(async (ep) => [ep, await src.counts(ep)] as const))),
    );
  return p;
}

function shownEndpoints(src: MetricsSource, scope: Scope): string[] {
  return src
    .endpoints()
    .filter((ep) => scope === null || scope.includes(ep))
    .sort();
}
