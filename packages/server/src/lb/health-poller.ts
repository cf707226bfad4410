import { Agent, request } from 'node:http';
import type { Balancer, LbWorker } from './balancer.js';
import type { ResolvedLbEndpoint } from './options.js';

/** How often a worker not ready yet is checked: a cold start is seen within this of its first 200. */
const STARTING_INTERVAL_MS = 50;
/** A health check not answered within this counts as failed. */
const CHECK_TIMEOUT_MS = 2_000;

export interface HealthEvents {
  /** First 200 since it was added: `ms` since it was added (the cold start). */
  ready(w: LbWorker, ms: number): void;
  /** A ready worker failed `unhealthyAfter` checks in a row: drain and replace it. */
  unhealthy(w: LbWorker): void;
}

/**
 * Checks each worker's health (`GET <healthPath>` on `PORT_HEALTH`): 200 ready, 204 initializing (no requests),
 * anything else or no answer unhealthy once it was ready (a worker still starting may refuse connections).
 */
export class HealthPoller {
  readonly #balancer: Balancer;
  readonly #config: (endpointId: string) => ResolvedLbEndpoint;
  readonly #events: HealthEvents;
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 });
  #closed = false;

  constructor(balancer: Balancer, config: (endpointId: string) => ResolvedLbEndpoint, events: HealthEvents) {
    this.#balancer = balancer;
    this.#config = config;
    this.#events = events;
  }

  /** Starts checking a worker (at once). */
  watch(w: LbWorker): void {
    this.unwatch(w.id);
    this.#schedule(w, 0);
  }

  unwatch(id: string): void {
    clearTimeout(this.#timers.get(id));
    this.#timers.delete(id);
  }

  close(): void {
    this.#closed = true;
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
    this.#agent.destroy();
  }

  #schedule(w: LbWorker, ms: number): void {
    if (this.#closed) return;
    const t = setTimeout(() => void this.#check(w), ms);
    t.unref();
    this.#timers.set(w.id, t);
  }

  async #check(w: LbWorker): Promise<void> {
    if (this.#balancer.get(w.id) !== w) return;
    const cfg = this.#config(w.endpointId);
    const status = await probe(w.host, w.healthPort, cfg.healthPath, this.#agent);
    if (this.#balancer.get(w.id) !== w || this.#closed) return;
    if (status === 200) {
      w.failures = 0;
      if (w.state !== 'ready') {
        const first = w.readyAt === undefined;
        w.readyAt ??= Date.now();
        this.#balancer.setState(w, 'ready');
        if (first) this.#events.ready(w, w.readyAt - w.addedAt);
      }
    } else if (status === 204) {
      w.failures = 0;
      if (w.state !== 'initializing') this.#balancer.setState(w, 'initializing');
    } else if (w.draining) {
      // Being stopped (scale-down) or replaced: its server going away is expected, not a failure.
      if (w.state === 'ready') this.#balancer.setState(w, 'unhealthy');
    } else if (w.state !== 'starting') {
      w.failures++;
      if (w.state !== 'unhealthy') this.#balancer.setState(w, 'unhealthy');
      if (w.failures === cfg.unhealthyAfter) this.#events.unhealthy(w);
    }
    this.#schedule(w, w.state === 'ready' ? cfg.healthIntervalMs : STARTING_INTERVAL_MS);
  }
}

/** The status of `GET path`, or 0 when it could not be had. */
function probe(host: string, port: number, path: string, agent: Agent): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host, port, path, method: 'GET', agent, timeout: CHECK_TIMEOUT_MS }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}
