import type { HealthReply } from '@berth/protocol';
import type { Logger } from '@berth/protocol/log';
import { soleLease, type ScalingLease } from '../store/scaling-lease.js';
import { decide, type ScalingPolicy } from './policy.js';
import { QueueWait } from './queue-wait.js';
import type { WorkerControl } from './worker-control.js';
import type { WorkerPool } from './worker-pool.js';

/** An endpoint the loop scales: its id and its scaling settings. */
export type ScaledPolicy = ScalingPolicy & { id: string };

export interface ScaleLoopOptions {
  /** The control plane: its workers (`server.workers`) and each endpoint's job counts. */
  server: { workers: WorkerControl; health(endpointId: string): Promise<HealthReply> };
  pool: WorkerPool;
  endpoints: readonly ScaledPolicy[];
  /** Who scales among replicas (`Store.scalingLease`). Default: this process alone. */
  lease?: ScalingLease;
  logger: Logger;
  /** Overrides the pool's `cost.tickMs` / `cost.wakeMs` (replicas on PostgreSQL: no wake, each look is a query). */
  tickMs?: number;
  wakeMs?: number;
  /** Clock (epoch ms). Default Date.now. */
  now?: () => number;
}

interface EndpointLoopState {
  /** Since when (epoch ms) each idle worker has had no job. */
  idleSince: Map<string, number>;
  /** Since when the endpoint has had no job queued or running (undefined: it has some). */
  noJobsSince: number | undefined;
}

/**
 * The one scaling loop: every look, for each endpoint, it takes the pool's workers and the connected ones' jobs,
 * asks the policy (`decide`), starts what is missing and stops idle workers above the desired count. Only the
 * holder of the scaling lease acts.
 */
export class ScaleLoop {
  readonly #o: ScaleLoopOptions;
  readonly #state = new Map<string, EndpointLoopState>();
  readonly #queueWait = new QueueWait();
  readonly #lease: ScalingLease;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  #wakeTimer: NodeJS.Timeout | undefined;
  #ticking = false;
  #waking = false;
  #leader = false;

  constructor(o: ScaleLoopOptions) {
    this.#o = o;
    this.#lease = o.lease ?? soleLease;
    this.#now = o.now ?? Date.now;
    for (const ep of o.endpoints) this.#state.set(ep.id, { idleSince: new Map(), noJobsSince: undefined });
  }

  /** Looks at once, then every `tickMs`. */
  start(): void {
    this.#timer = setInterval(() => void this.tick(), this.#o.tickMs ?? this.#o.pool.cost.tickMs);
    this.#timer.unref();
    const wakeMs = this.#o.wakeMs ?? this.#o.pool.cost.wakeMs;
    if (wakeMs > 0) {
      this.#wakeTimer = setInterval(() => void this.#wake(), wakeMs);
      this.#wakeTimer.unref();
    }
    void this.tick();
  }

  /** Stops looking (the workers keep running) and gives the lease back. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    clearInterval(this.#wakeTimer);
    while (this.#ticking) await new Promise((r) => setTimeout(r, 10));
    await this.#lease.close();
  }

  /** One look (also run by the timer). */
  async tick(): Promise<void> {
    if (this.#ticking) return;
    this.#ticking = true;
    try {
      if (!(await this.#lease.held())) {
        if (this.#leader) this.#o.logger.warn('scaling lease lost: another replica scales the workers now');
        this.#leader = false;
        return;
      }
      const now = this.#now();
      if (!(await this.#o.pool.refresh(now, !this.#leader))) return;
      this.#leader = true;
      for (const ep of this.#o.endpoints) await this.#tickEndpoint(ep, this.#state.get(ep.id)!, now);
    } catch (err) {
      this.#o.logger.error('scaler failed', { error: err instanceof Error ? err.message : String(err) });
    } finally {
      this.#ticking = false;
    }
  }

  /** Between looks: an endpoint at zero workers with a job queued gets its look now (a cold start begins). */
  async #wake(): Promise<void> {
    if (!this.#leader || this.#ticking || this.#waking) return;
    this.#waking = true;
    try {
      const now = this.#now();
      for (const ep of this.#o.endpoints) {
        if (!this.#o.pool.canStart(ep.id, now) || this.#o.pool.list(ep.id).length > 0) continue;
        if ((await this.#o.server.health(ep.id)).jobs.inQueue > 0) return void this.tick();
      }
    } catch {
      // The look reports what fails.
    } finally {
      this.#waking = false;
    }
  }

  async #tickEndpoint(ep: ScaledPolicy, st: EndpointLoopState, now: number): Promise<void> {
    const { server, pool, logger } = this.#o;
    const workers = pool.list(ep.id);
    const ours = new Set(workers.map((w) => w.id));
    const running = new Map<string, number>();
    for (const w of server.workers.connected(ep.id)) {
      if (!ours.has(w.workerId)) continue;
      running.set(w.workerId, w.running);
      if (w.running > 0 || w.draining) st.idleSince.delete(w.workerId);
      else if (!st.idleSince.has(w.workerId)) st.idleSince.set(w.workerId, now);
    }
    const { jobs } = await server.health(ep.id);
    if (pool.sharedByReplicas) {
      // A worker connected to another replica is not seen here: with no job anywhere it counts as idle since the
      // endpoint has had none (or since it started), so replicas behind a balancer still scale to zero.
      if (jobs.inQueue + jobs.inProgress > 0) st.noJobsSince = undefined;
      else st.noJobsSince ??= now;
      for (const w of workers) {
        if (running.has(w.id) || w.pending || st.noJobsSince === undefined) continue;
        running.set(w.id, 0);
        if (!st.idleSince.has(w.id)) st.idleSince.set(w.id, Math.max(st.noJobsSince, w.startedAt));
      }
    }
    for (const id of st.idleSince.keys()) if (!running.has(id)) st.idleSince.delete(id);
    const queuedForMs = this.#queueWait.observe(ep.id, jobs.inQueue, now);
    const d = decide(
      ep,
      {
        inQueue: jobs.inQueue,
        inProgress: jobs.inProgress,
        ...(queuedForMs !== undefined ? { queuedForMs } : {}),
        workers: workers.map((w) => w.id),
        running,
        idleSince: st.idleSince,
      },
      now,
    );
    if (d.start > 0 && pool.canStart(ep.id, now)) {
      logger.info(`scaling ${ep.id} up`, {
        endpointId: ep.id,
        from: workers.length,
        to: workers.length + d.start,
        inQueue: jobs.inQueue,
      });
      for (let i = 0; i < d.start; i++) pool.start(ep.id);
    }
    if (d.stop.length > 0) {
      // A job may have been handed to a worker since the look above: only those still idle now are stopped.
      const busy = new Set(
        server.workers
          .connected(ep.id)
          .filter((w) => w.running > 0)
          .map((w) => w.workerId),
      );
      for (const id of d.stop) {
        if (busy.has(id)) continue;
        logger.info(`scaling ${ep.id} down: worker idle`, {
          endpointId: ep.id,
          workerId: id,
          idleMs: now - (st.idleSince.get(id) ?? now),
        });
        st.idleSince.delete(id);
        pool.stop(ep.id, id);
      }
    }
    server.workers.setExpected(ep.id, pool.list(ep.id).length);
  }
}
