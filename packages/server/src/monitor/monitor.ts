import type { Clock } from '../clock.js';
import type { Logger } from '@berth/protocol/log';
import type { EndpointCounts, JobRecord } from '../store/types.js';
import type { WaitingFor, WorkerRegistry } from '../workers/worker-registry.js';
import { EndpointRing, SLOT_MS, SLOTS, type RingWindow } from './endpoint-ring.js';
import { lbGauges, lbNow, type LbNow, type LbSource } from './lb-now.js';

export interface MonitorDeps {
  clock: Clock;
  endpoints(): string[];
  counts(endpointId: string): Promise<EndpointCounts>;
  registry: WorkerRegistry;
  heartbeatMs: number;
  logger: Logger;
  /** Load-balancing endpoints (`"type": "http"`): their requests and workers instead of a queue's. */
  lb?: LbSource;
}

/** What `GET /v2/<ep>/monitor` answers. */
export interface MonitorReply extends RingWindow {
  endpointId: string;
  slotMs: number;
  /** The clock when answered, epoch ms (the last slot is partial: its rates divide by the time elapsed in it). */
  now: number;
  /**
   * Now, while jobs are queued: why they wait (as `/health`'s `waitingFor`; docs/api.md, "Why a job waits"). A
   * load-balancing endpoint: why requests wait, or the scaler's reason a worker is not started (`gpu`) at any time;
   * `worker`: workers are there but none ready with room.
   */
  waitingFor?: WaitingFor | 'worker';
  /** Now: which worker holds which GPU (as `/health`'s `gpus`), when the scaler places GPUs. */
  gpus?: { workerId: string; devices: string[] }[];
  /**
   * A load-balancing endpoint (`"type": "http"`, docs/load-balancing.md): its series count requests (`completed`:
   * answered below 500, `failed`: 5xx; `queue`: requests waiting for a worker; `exec`: request time from arrival to
   * the last byte; no `delay`), as this replica saw them, and this is its state now.
   */
  lb?: LbNow;
}

/**
 * The per-endpoint history behind the playground's Monitor view, kept in fixed memory (`EndpointRing`: 5 s slots,
 * one hour) so it works with no Prometheus. Jobs completed and failed are the deltas of the stored counters and
 * queue depth and workers are sampled from the store and the shared presence: the same on every replica. Delay,
 * execution and cold starts are what this replica saw. Sampled every slot by a timer (`start`) and on every read.
 * A load-balancing endpoint's requests (`request`, from the proxy's metrics), their times and its cold starts are
 * also this replica's; its waiting requests and workers are sampled from the proxy.
 */
export class Monitor {
  private readonly rings = new Map<string, EndpointRing>();
  /** Stored done counters at the last sample, per endpoint. */
  private readonly last = new Map<string, { completed: number; failed: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: MonitorDeps) {}

  private ring(endpointId: string): EndpointRing {
    let r = this.rings.get(endpointId);
    if (!r) this.rings.set(endpointId, (r = new EndpointRing()));
    return r;
  }

  jobFinished(job: JobRecord): void {
    if (job.startedAt === undefined) return;
    const exec = job.finishedAt === undefined ? undefined : job.finishedAt - job.startedAt;
    this.ring(job.endpointId).times(this.deps.clock.now(), job.startedAt - job.queuedAt, exec);
  }

  coldStart(endpointId: string): void {
    this.ring(endpointId).coldStart(this.deps.clock.now());
  }

  /** A load-balancing request answered with `status` after `ms` (5xx counts as failed). */
  request(endpointId: string, status: number, ms: number): void {
    const ring = this.ring(endpointId);
    const t = this.deps.clock.now();
    ring.addDone(t, status < 500 ? 1 : 0, status < 500 ? 0 : 1);
    ring.latency(t, ms);
  }

  /**
   * Samples the endpoint (every endpoint when omitted): stored counters (their growth since the last sample goes to
   * the current slot), queue depth and workers. The first sample of an endpoint only sets the baseline.
   */
  async sample(endpointId?: string): Promise<void> {
    const eps = endpointId === undefined ? this.deps.endpoints() : [endpointId];
    await Promise.all(
      eps.map(async (ep) => {
        const t = this.deps.clock.now();
        const { lb } = this.deps;
        if (lb?.has(ep)) {
          const g = lbGauges(lb.health(ep));
          return this.ring(ep).gauges(t, g.queue, g.workers);
        }
        const c = await this.deps.counts(ep);
        const ring = this.ring(ep);
        const prev = this.last.get(ep);
        // Two samples may answer out of order: counters only go up, so an older answer adds nothing.
        if (prev) ring.addDone(t, Math.max(0, c.completed - prev.completed), Math.max(0, c.failed - prev.failed));
        this.last.set(ep, {
          completed: Math.max(c.completed, prev?.completed ?? 0),
          failed: Math.max(c.failed, prev?.failed ?? 0),
        });
        const w = this.deps.registry.health(ep, performance.now(), this.deps.heartbeatMs);
        ring.gauges(t, c.inQueue, {
          idle: w.idle,
          running: w.running,
          starting: w.initializing,
          draining: w.throttled,
          unhealthy: w.unhealthy,
        });
      }),
    );
  }

  /** The last `windowMs` (up to an hour) of an endpoint, sampled now, with why its queued jobs wait now. */
  async read(endpointId: string, windowMs: number): Promise<MonitorReply> {
    await this.sample(endpointId);
    const now = this.deps.clock.now();
    const slots = Math.max(1, Math.min(SLOTS, Math.ceil(windowMs / SLOT_MS)));
    const reply: MonitorReply = { endpointId, slotMs: SLOT_MS, now, ...this.ring(endpointId).window(now, slots) };
    const { registry, lb } = this.deps;
    if (lb?.has(endpointId)) {
      const h = lb.health(endpointId);
      reply.lb = lbNow(lb, endpointId, h);
      // Requests waiting: the scaler's reason first, else the proxy's. None waiting: a worker the scaler wants and
      // cannot start (a GPU, its image, a crash loop), never a cold start under way.
      const scaler = registry.scalerReason(endpointId);
      const why = h.jobs.inQueue > 0 ? (scaler ?? h.waitingFor) : scaler === 'cold_start' ? undefined : scaler;
      if (why !== undefined) reply.waitingFor = why as WaitingFor | 'worker';
    } else if ((await this.deps.counts(endpointId)).inQueue > 0)
      reply.waitingFor = registry.waitingFor(endpointId, false, performance.now(), this.deps.heartbeatMs);
    const gpus = registry.gpusOf(endpointId);
    if (gpus) reply.gpus = gpus;
    return reply;
  }

  /** Samples every endpoint now and then every slot (an unref'd timer). */
  start(): void {
    if (this.timer) return;
    // One line when sampling starts failing (the store is down: its outage is logged where it matters), not one per slot.
    let failing = false;
    const tick = () =>
      void this.sample().then(
        () => (failing = false),
        (err) => {
          if (!failing) this.deps.logger.warn('monitor sample failed', { err });
          failing = true;
        },
      );
    tick();
    this.timer = setInterval(tick, SLOT_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
