import type { HealthReply } from '@berth/protocol';
import type { Logger } from '@berth/protocol/log';
import { soleLease, type ScalingLease } from '../store/scaling-lease.js';
import type { ScalerWaitReason } from '../workers/worker-registry.js';
import type { GpuAllocator } from './gpu-allocator.js';
import { decide, type ScalingPolicy } from './policy.js';
import { QueueWait } from './queue-wait.js';
import type { WorkerControl } from './worker-control.js';
import type { WorkerPool } from './worker-pool.js';

/**
 * An endpoint the loop scales: its id, its scaling settings, and the GPUs each of its workers needs (0 or unset:
 * none; then the loop's `gpus` allocator hands them out).
 */
export type ScaledPolicy = ScalingPolicy & { id: string; gpusPerWorker?: number | undefined };

export interface ScaleLoopOptions {
  /** The control plane: its workers (`server.workers`) and each endpoint's job counts. */
  server: { workers: WorkerControl; health(endpointId: string): Promise<HealthReply> };
  pool: WorkerPool;
  endpoints: readonly ScaledPolicy[];
  /**
   * The box's GPUs, for endpoints with `gpusPerWorker`: a worker starts only when that many devices are free (the
   * pool takes them as it starts it, and gives them back once it has stopped); else the endpoint waits (`gpu`).
   */
  gpus?: GpuAllocator;
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
  /** The wait reason last given to `setWaitReason`. */
  reason: ScalerWaitReason | undefined;
  /** It wanted a worker and no GPUs were free (said once in the log until it gets them). */
  gpuShort: boolean;
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
    for (const ep of o.endpoints) {
      if ((ep.gpusPerWorker ?? 0) > 0 && !o.gpus)
        throw new Error(`endpoint ${ep.id} needs ${ep.gpusPerWorker} GPU(s) per worker and the scale loop has no GPUs`);
      this.#state.set(ep.id, { idleSince: new Map(), noJobsSince: undefined, reason: undefined, gpuShort: false });
    }
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
        // Not for an endpoint waiting for GPUs: a look would not start it (devices are freed by the ticks' stops).
        if (this.#state.get(ep.id)?.gpuShort) continue;
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
    let gpuShort = false;
    if (d.start > 0 && pool.canStart(ep.id, now)) {
      const start = this.#withGpus(ep, st, d.start, workers.length);
      gpuShort = start < d.start;
      if (start > 0)
        logger.info(`scaling ${ep.id} up`, {
          endpointId: ep.id,
          from: workers.length,
          to: workers.length + start,
          inQueue: jobs.inQueue,
        });
      for (let i = 0; i < start; i++) pool.start(ep.id);
    }
    st.gpuShort = gpuShort;
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
    this.#setReason(ep.id, st, gpuShort);
  }

  /**
   * How many of `wanted` new workers get their GPUs now (all of them for an endpoint without `gpusPerWorker`).
   * Short of devices: said once in the log, until the endpoint gets them.
   */
  #withGpus(ep: ScaledPolicy, st: EndpointLoopState, wanted: number, from: number): number {
    const per = ep.gpusPerWorker ?? 0;
    const gpus = this.#o.gpus;
    if (per <= 0 || !gpus) return wanted;
    const fit = Math.min(wanted, Math.floor(gpus.freeCount() / per));
    if (fit < wanted && !st.gpuShort)
      this.#o.logger.warn(
        `endpoint ${ep.id} waits for a GPU: ${from + fit} worker(s), ${wanted - fit} more wanted, ${per} GPU(s) each, ${gpus.freeCount()} of ${gpus.devices.length} free (${describeHolders(gpus)})`,
        { endpointId: ep.id },
      );
    return fit;
  }

  /**
   * Why the endpoint's queued jobs wait, as the loop and its pool see it: the pool's problems first (a missing
   * image, a crash loop), then GPUs it could not have, then a worker starting; given to `setWaitReason` when it
   * changes.
   */
  #setReason(endpointId: string, st: EndpointLoopState, gpuShort: boolean): void {
    const fromPool = this.#o.pool.waitReason?.(endpointId);
    const reason = fromPool === 'image_missing' || fromPool === 'crash_loop' ? fromPool : gpuShort ? 'gpu' : fromPool;
    if (reason === st.reason) return;
    st.reason = reason;
    this.#o.server.workers.setWaitReason(endpointId, reason);
  }
}

/** "0 ep-a-1, 1 ep-a-1, 2 ep-b-1": which worker holds each held device. */
function describeHolders(gpus: GpuAllocator): string {
  const held = gpus.holdings().flatMap((h) => h.devices.map((d) => `${d} ${h.workerId}`));
  return held.length ? `held: ${held.join(', ')}` : 'none held';
}
