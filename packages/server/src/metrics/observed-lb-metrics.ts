import { LbMetrics } from '../lb/lb-metrics.js';

/** Who else hears of load-balancing requests and cold starts: the Monitor view's history (monitor/). */
export interface LbObserver {
  /** A request was answered (`status`: the worker's, or Berth's 4xx/5xx) after `ms` (waits included). */
  request(endpointId: string, status: number, ms: number): void;
  /** A worker answered its first `/ping` 200. */
  coldStart(endpointId: string): void;
}

/**
 * {@link LbMetrics} that also tell an {@link LbObserver} (set once the server has built it): the Prometheus
 * families stay the only record `/metrics` reads, and the Monitor's ring gets the same events.
 */
export class ObservedLbMetrics extends LbMetrics {
  observer: LbObserver | undefined;

  override request(endpointId: string, workerId: string, status: number, ms: number): void {
    super.request(endpointId, workerId, status, ms);
    this.observer?.request(endpointId, status, ms);
  }

  override coldStart(endpointId: string, ms: number): void {
    super.coldStart(endpointId, ms);
    this.observer?.coldStart(endpointId);
  }
}
