import type { Clock } from '../clock.js';
import type { Logger } from '@berth/protocol/log';
import type { EndpointCounts, JobRecord } from '../store/types.js';
import type { WaitingFor, WorkerRegistry } from '../workers/worker-registry.js';
import { EndpointRing, SLOT_MS, SLOTS, type RingWindow } from './endpoint-ring.js';

export interface MonitorDeps {
  clock: Clock;
  endpoints(): string[];
  counts(endpointId: string): Promise<EndpointCounts>;
  registry: WorkerRegistry;
  heartbeatMs: number;
  logger: Logger;
}

/** What `GET /v2/<ep>/monitor` answers. */
export interface MonitorReply extends RingWindow {
  endpointId: string;
  slotMs: number;
  /** The clock when answered, epoch ms (the last slot is partial: its rates divide by the time elapsed in it). */
  now: number;
  /** Now, while jobs are queued: why they wait (as `/health`'s `waitingFor`; docs/api.md, "Why a job waits"). */
  waitingFor?: WaitingFor;
  /** Now: which worker holds which GPU (as `/health`'s `gpus`), when the scaler places GPUs. */
  gpus?: { workerId: string; devices: string[] }[];
}

/**
 * The per-endpoint history behind the playground's Monitor view, kept in fixed memory (`EndpointRing`: 5 s slots,
 * one hour) so it works with no Prometheus. Jobs completed and failed are the deltas of the stored counters and
 * queue depth and workers are sampled from the store and the shared presence: the same on every replica. Delay,
 * execution and cold starts are what this replica saw. Sampled every slot by a timer (`start`) and on every read.
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

  /**
   * Samples the endpoint (every endpoint when omitted): stored counters (their growth since the last sample goes to
   * the current slot), queue depth and workers. The first sample of an endpoint only sets the baseline.
   */
  async sample(endpointId?: string): Promise<void> {
    const eps = endpointId === undefined ? this.deps.endpoints() : [endpointId];
    await Promise.all(
      eps.map(async (ep) => {
        const t = this.deps.clock.now();
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
    const { registry } = this.deps;
    if ((await this.deps.counts(endpointId)).inQueue > 0)
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
