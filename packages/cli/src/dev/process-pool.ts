import type { WorkerControl } from '@berth/server';
import {
  nextWorkerId,
  type GpuAllocator,
  type PoolWaitReason,
  type PoolWorker,
  type WorkerPool,
} from '@berth/server/scaling';
import type { WorkerSpec, WorkerSupervisor } from '../internal/supervisor.js';
import type { HttpWorkers } from '../internal/http-workers.js';

export interface ProcessPoolOptions {
  supervisor: WorkerSupervisor;
  workers: WorkerControl;
  /** The process spec of worker `workerId` of an endpoint. */
  specFor: (endpointId: string, workerId: string) => WorkerSpec;
  /** Whether the endpoint's handler fails to build or load: no worker of it starts until it is fixed. */
  broken: (endpointId: string) => boolean;
  /**
   * The box's GPUs and the number each worker of an endpoint gets (`gpusPerWorker`; 0: none): a worker process
   * gets its own as `CUDA_VISIBLE_DEVICES`, kept across its restarts, freed once it is stopped or given up on.
   */
  gpus?: { allocator: GpuAllocator; perWorker: (endpointId: string) => number };
  /** Load-balancing endpoints' workers (ports, the proxy's view); absent: none. */
  http?: HttpWorkers;
  /**
   * `batch`: this pool runs the endpoints' batch lanes (issue #38): its workers are `<endpoint>-batch-<n>`,
   * registered with the server as lane workers before they start (`workers.setLane`) and given `BERTH_LANE=batch`.
   * Without: the endpoints' other workers. Both pools share one supervisor.
   */
  lane?: 'batch';
}

/** Whether a worker id of the endpoint's is one of its batch lane's (`<endpoint>-batch-<n>`). */
export function isBatchLaneId(endpointId: string, workerId: string): boolean {
  return workerId.startsWith(`${endpointId}-batch-`);
}

/** Tells this run's HTTP worker ids apart from an earlier run's (a stale `strict` pin must not match). */
const RUN_TAG = Math.random().toString(36).slice(2, 6);

/**
 * `berth dev`'s workers: one child process each, run by the supervisor (which restarts crashes with backoff).
 * A look is free (the supervisor's table), a start a process; ids are `<endpoint>-<n>`, the lowest free one. An
 * HTTP worker (load-balancing endpoint) gets a free `PORT` first, an id never reused (`<endpoint>-<run>-<n>`, what
 * `X-Runpod-Worker-Id` pins), and is stopped only once its in-flight requests are done.
 */
export class ProcessPool implements WorkerPool {
  readonly cost = { tickMs: 100, wakeMs: 0 };
  readonly sharedByReplicas = false;
  readonly #o: ProcessPoolOptions;
  /** Workers stopped by scale-down that have not exited yet: their ids are not reused until they have. */
  readonly #retiring = new Set<string>();
  /** HTTP workers waiting for their port: their endpoint. */
  readonly #pending = new Map<string, string>();
  readonly #startedAt = new Map<string, number>();
  /** Each worker holding GPUs: its endpoint. */
  readonly #endpointOf = new Map<string, string>();
  readonly #counter = new Map<string, number>();

  constructor(o: ProcessPoolOptions) {
    this.#o = o;
  }

  /** GPUs of workers the supervisor no longer has (given up on after crashes, or failed to load) are freed. */
  async refresh(): Promise<boolean> {
    const gpus = this.#o.gpus?.allocator;
    if (gpus)
      for (const h of gpus.holdings()) {
        const ep = this.#endpointOf.get(h.workerId);
        if (
          !this.#retiring.has(h.workerId) &&
          !this.#pending.has(h.workerId) &&
          (ep === undefined || !this.#o.supervisor.workerIds(ep).includes(h.workerId))
        )
          this.#release(h.workerId);
      }
    return true;
  }

  list(endpointId: string): PoolWorker[] {
    const lane = this.#o.lane === 'batch';
    const ids = this.#o.supervisor
      .workerIds(endpointId)
      .filter((id) => !this.#retiring.has(id) && isBatchLaneId(endpointId, id) === lane);
    for (const [id, ep] of this.#pending) if (ep === endpointId) ids.push(id);
    return ids.map((id) => ({ id, startedAt: this.#startedAt.get(id) ?? 0 }));
  }

  canStart(endpointId: string): boolean {
    return !this.#o.broken(endpointId);
  }

  start(endpointId: string): void {
    const http = this.#o.http?.has(endpointId) === true;
    const id = http
      ? `${endpointId}-${RUN_TAG}-${this.#next(endpointId)}`
      : nextWorkerId(this.#o.lane === 'batch' ? `${endpointId}-batch` : endpointId, [
          ...this.#o.supervisor.workerIds(endpointId),
          ...this.#retiring,
        ]);
    this.startAs(endpointId, id);
  }

  /** Starts a worker under a given id (`strict-resume` of a scaled-down HTTP worker). False: it cannot now. */
  startAs(endpointId: string, id: string): boolean {
    if (this.#pending.has(id) || this.#retiring.has(id) || this.#o.supervisor.workerIds(endpointId).includes(id))
      return false;
    const n = this.#o.gpus?.perWorker(endpointId) ?? 0;
    let devices: readonly string[] | undefined;
    if (n > 0) {
      // The scale loop asks for a worker only when its GPUs are free.
      devices = this.#o.gpus!.allocator.take(endpointId, id, n);
      if (!devices) return false;
      this.#endpointOf.set(id, endpointId);
    }
    if (this.#o.lane === 'batch') this.#o.workers.setLane(id, 'batch');
    const launch = () => {
      const spec = this.#o.specFor(endpointId, id);
      if (this.#o.lane === 'batch') spec.env = { ...spec.env, BERTH_LANE: 'batch' };
      if (devices) spec.env = { ...spec.env, CUDA_VISIBLE_DEVICES: devices.join(',') };
      this.#o.supervisor.add(spec);
      this.sync(endpointId);
    };
    this.#startedAt.set(id, Date.now());
    const http = this.#o.http;
    if (!http?.has(endpointId)) {
      launch();
      return true;
    }
    this.#pending.set(id, endpointId);
    void http.prepare(endpointId, id).then(() => {
      this.#pending.delete(id);
      launch();
    });
    return true;
  }

  stop(endpointId: string, workerId: string): void {
    this.#retiring.add(workerId);
    const http = this.#o.http?.has(endpointId) === true ? this.#o.http : undefined;
    // An HTTP worker finishes its in-flight requests first (the proxy sends it no new one).
    const drained = http ? http.drain(workerId) : Promise.resolve();
    void drained
      .then(() => this.#o.supervisor.retire(workerId))
      .then(() => {
        this.#retiring.delete(workerId);
        this.#startedAt.delete(workerId);
        this.#release(workerId);
        http?.removed(workerId, true);
        this.sync(endpointId);
      });
    // After the SIGTERM: no new job for it, and a pull worker's held polls answered so that it exits now.
    if (!http) setTimeout(() => this.#o.workers.stopping(workerId), 200).unref();
  }

  /** Why the endpoint's queued jobs wait, as the supervisor sees it: crashing again and again, or a worker starting. */
  waitReason(endpointId: string): PoolWaitReason | undefined {
    const { starting, crashLoop } = this.#o.supervisor.startState(endpointId);
    return crashLoop
      ? 'crash_loop'
      : starting || [...this.#pending.values()].includes(endpointId)
        ? 'cold_start'
        : undefined;
  }

  #release(workerId: string): void {
    this.#endpointOf.delete(workerId);
    this.#o.gpus?.allocator.release(workerId);
  }

  /** Workers with a process count as expected; those not connected yet are `initializing` in /health. */
  sync(endpointId: string): void {
    this.#o.workers.setExpected(endpointId, this.list(endpointId).length);
  }

  #next(endpointId: string): number {
    const n = (this.#counter.get(endpointId) ?? 0) + 1;
    this.#counter.set(endpointId, n);
    return n;
  }
}
