import type { EndpointCounts, JobRecord } from '../store/types.js';
import type { WorkerRegistry } from '../ws/worker-registry.js';
import { ScalerMetrics } from './scaler-metrics.js';
import { Histogram } from './histogram.js';

/** What one scrape reads besides the counters kept here. */
export interface MetricsSource {
  endpoints(): string[];
  counts(endpointId: string): Promise<EndpointCounts>;
  registry: WorkerRegistry;
  heartbeatMs: number;
}

const esc = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/**
 * Control-plane metrics in the Prometheus text format (`GET /metrics`). Job and queue figures come from the store
 * at scrape time (so they survive restarts and agree with `/health`); time histograms, webhook attempts and
 * rate-limit rejections are counted by this process since it started.
 */
export class Metrics {
  private readonly delay = new Map<string, Histogram>();
  private readonly execution = new Map<string, Histogram>();
  private readonly terminal = new Map<string, number>();
  private readonly webhooks = new Map<string, number>();
  private readonly rateLimited = new Map<string, number>();
  /** Worker cold starts and start failures reported by a scaler (`berth serve --scale`). */
  readonly scaler = new ScalerMetrics();

  /** A job reached a terminal state: its delay and execution times, by endpoint. */
  jobFinished(job: JobRecord): void {
    bump(this.terminal, `${job.endpointId}\u0000${job.status}`);
    if (job.startedAt === undefined) return;
    hist(this.delay, job.endpointId).observe(job.startedAt - job.queuedAt);
    if (job.finishedAt !== undefined) hist(this.execution, job.endpointId).observe(job.finishedAt - job.startedAt);
  }

  webhookAttempt(outcome: string): void {
    bump(this.webhooks, outcome);
  }

  rateLimitRejected(endpointId: string, operation: string): void {
    bump(this.rateLimited, `${endpointId}\u0000${operation}`);
  }

  /**
   * The scrape. `endpoints`: the endpoints the caller's key may see (`null`: all); lines of other endpoints are
   * left out, and so are the process-wide webhook counters (they are not per endpoint).
   */
  async render(src: MetricsSource, endpoints: readonly string[] | null = null): Promise<string> {
    const out: string[] = [];
    const head = (name: string, type: string, help: string) =>
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    const shown = (ep: string) => endpoints === null || endpoints.includes(ep);
    const perEndpoint = <T>(m: Map<string, T>) =>
      [...m].filter(([key]) => shown(key.split('\u0000')[0]!)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const eps = src.endpoints().filter(shown).sort();
    const counts = await Promise.all(eps.map(async (ep) => [ep, await src.counts(ep)] as const));

    head('berth_jobs', 'gauge', 'Jobs held now, by endpoint and state (IN_QUEUE, IN_PROGRESS).');
    for (const [ep, c] of counts) {
      out.push(
        `berth_jobs{endpoint="${esc(ep)}",state="IN_QUEUE"} ${c.inQueue}`,
        `berth_jobs{endpoint="${esc(ep)}",state="IN_PROGRESS"} ${c.inProgress}`,
      );
    }
    head('berth_queue_depth', 'gauge', 'Jobs waiting for a worker, by endpoint.');
    for (const [ep, c] of counts) out.push(`berth_queue_depth{endpoint="${esc(ep)}"} ${c.inQueue}`);
    head('berth_jobs_completed_total', 'counter', 'Jobs completed, by endpoint (stored counter, survives restarts).');
    for (const [ep, c] of counts) out.push(`berth_jobs_completed_total{endpoint="${esc(ep)}"} ${c.completed}`);
    head('berth_jobs_failed_total', 'counter', 'Jobs failed, by endpoint (stored counter, survives restarts).');
    for (const [ep, c] of counts) out.push(`berth_jobs_failed_total{endpoint="${esc(ep)}"} ${c.failed}`);
    head('berth_jobs_retried_total', 'counter', 'Jobs sent back to the queue (retry or requeue), by endpoint.');
    for (const [ep, c] of counts) out.push(`berth_jobs_retried_total{endpoint="${esc(ep)}"} ${c.retried}`);
    head(
      'berth_jobs_finished_total',
      'counter',
      'Jobs that reached a terminal state in this process, by endpoint and state.',
    );
    for (const [key, n] of perEndpoint(this.terminal)) {
      const [ep, state] = key.split('\u0000') as [string, string];
      out.push(`berth_jobs_finished_total{endpoint="${esc(ep)}",state="${state}"} ${n}`);
    }

    head('berth_job_delay_seconds', 'histogram', 'Time from submit (or retry) to a worker starting the job.');
    for (const [ep, h] of perEndpoint(this.delay))
      out.push(...h.lines('berth_job_delay_seconds', `endpoint="${esc(ep)}"`));
    head('berth_job_execution_seconds', 'histogram', 'Time from start to the terminal state.');
    for (const [ep, h] of perEndpoint(this.execution))
      out.push(...h.lines('berth_job_execution_seconds', `endpoint="${esc(ep)}"`));

    head('berth_workers', 'gauge', 'Workers by endpoint and state (as /health reports them).');
    const now = performance.now();
    for (const ep of eps) {
      const w = src.registry.health(ep, now, src.heartbeatMs);
      for (const [state, n] of Object.entries(w))
        out.push(`berth_workers{endpoint="${esc(ep)}",state="${state}"} ${n}`);
    }
    head(
      'berth_webhook_attempts_total',
      'counter',
      'Webhook delivery attempts by outcome (delivered, retrying, failed).',
    );
    if (endpoints === null)
      for (const outcome of ['delivered', 'retrying', 'failed'])
        out.push(`berth_webhook_attempts_total{outcome="${outcome}"} ${this.webhooks.get(outcome) ?? 0}`);
    head('berth_rate_limited_total', 'counter', 'Requests refused with 429, by endpoint and operation.');
    for (const [key, n] of perEndpoint(this.rateLimited)) {
      const [ep, op] = key.split('\u0000') as [string, string];
      out.push(`berth_rate_limited_total{endpoint="${esc(ep)}",operation="${op}"} ${n}`);
    }
    out.push(...this.scaler.lines(shown, esc));
    return `${out.join('\n')}\n`;
  }
}

function bump(m: Map<string, number>, key: string): void {
  m.set(key, (m.get(key) ?? 0) + 1);
}

function hist(m: Map<string, Histogram>, key: string): Histogram {
  let h = m.get(key);
  if (!h) m.set(key, (h = new Histogram()));
  return h;
}
