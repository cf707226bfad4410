import type { Counter, CounterChild, HistogramFamily, Registry } from '../metrics/registry.js';
import type { ScalerMetrics } from '../metrics/scaler-metrics.js';

/** Upper bounds (ms) of the proxied request histogram. */
const REQUEST_BUCKETS_MS = [
  1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 120_000, 330_000,
];

/** Who else hears of load-balancing requests and cold starts (the Monitor, monitor/). */
export interface LbObserver {
  /** A request was answered (`status`: the worker's, or Berth's 4xx/5xx) after `ms` (waits included). */
  request(endpointId: string, status: number, ms: number): void;
  /** A worker answered its first `/ping` 200. */
  coldStart(endpointId: string): void;
}

/**
 * Load-balancing endpoints' figures: `berth_lb_requests_total{endpoint, worker, status}`,
 * `berth_lb_request_seconds{endpoint}` (until the answer's last byte), and cold starts (launch to first `/ping`
 * 200) in `berth_worker_cold_start_seconds{until="ready"}`.
 */
export class LbMetrics {
  readonly #requests: Counter;
  readonly #seconds: HistogramFamily;
  readonly #scaler: ScalerMetrics;
  readonly #served = new Map<string, { ok: number; failed: number }>();
  /** Who else hears of requests and cold starts: the Monitor view's history (set once the server has built it). */
  observer: LbObserver | undefined;
  /** endpoint -> worker -> status -> the counter's child. */
  readonly #byWorker = new Map<string, Map<string, Map<number, CounterChild>>>();

  constructor(r: Registry, scaler: ScalerMetrics) {
    this.#scaler = scaler;
    this.#requests = r.counter({
      name: 'berth_lb_requests_total',
      help: "Requests of load-balancing endpoints, by endpoint, worker and answer status (the worker's, or Berth's 4xx/5xx when it answered none).",
      labels: ['endpoint', 'worker', 'status'],
      perReplica: true,
    });
    this.#seconds = r.histogram(
      {
        name: 'berth_lb_request_seconds',
        help: "Time of load-balancing requests, from arrival (waits for a worker included) to the answer's last byte.",
        labels: ['endpoint'],
        perReplica: true,
      },
      REQUEST_BUCKETS_MS,
      1000,
    );
  }

  request(endpointId: string, workerId: string, status: number, ms: number): void {
    // The counter's child by nested maps, found without building a label key (a proxied request's hot path).
    let byWorker = this.#byWorker.get(endpointId);
    if (!byWorker) this.#byWorker.set(endpointId, (byWorker = new Map()));
    let byStatus = byWorker.get(workerId);
    if (!byStatus) byWorker.set(workerId, (byStatus = new Map()));
    let c = byStatus.get(status);
    if (!c) byStatus.set(status, (c = this.#requests.labels(endpointId, workerId, String(status))));
    c.inc();
    this.#seconds.of(endpointId).observe(ms);
    let s = this.#served.get(endpointId);
    if (!s) this.#served.set(endpointId, (s = { ok: 0, failed: 0 }));
    if (status < 500) s.ok++;
    else s.failed++;
    this.observer?.request(endpointId, status, ms);
  }

  /** Answered requests (below 500) and failed ones, for `/health`. */
  served(endpointId: string): { ok: number; failed: number } {
    return this.#served.get(endpointId) ?? { ok: 0, failed: 0 };
  }

  coldStart(endpointId: string, ms: number): void {
    this.#scaler.coldStart(endpointId, 'ready', ms);
    this.observer?.coldStart(endpointId);
  }
}
