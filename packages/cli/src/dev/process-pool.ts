import type { WorkerControl } from '@berth/server';
import {
  nextWorkerId,
  type GpuAllocator,
  type PoolWaitReason,
  type PoolWorker,
  type WorkerPool,
} from '@berth/server/scaling';
import type { WorkerSpec, WorkerSupervisor } from '../internal/supervisor.js';

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
}

/**
 * `berth dev`'s workers: one child process each, run by the supervisor (which restarts crashes with backoff).
 * A look is free (the supervisor's table), a start a process; ids are `<endpoint>-<n>`, the lowest free one.
 */
export class ProcessPool implements WorkerPool {
  readonly cost = { tickMs: 100, wakeMs: 0 };
  readonly sharedByReplicas = false;
  readonly #o: ProcessPoolOptions;
  /** Workers stopped by scale-down that have not exited yet: their ids are not reused until they have. */
  readonly #retiring = new Set<string>();
  readonly #startedAt = new Map<string, number>();
  /** Each worker holding GPUs: its endpoint. */
  readonly #endpointOf = new Map<string, string>();

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
          (ep === undefined || !this.#o.supervisor.workerIds(ep).includes(h.workerId))
        )
          this.#release(h.workerId);
      }
    return true;
  }

  list(endpointId: string): PoolWorker[] {
    return this.#o.supervisor.workerIds(endpointId).map((id) => ({ id, startedAt: this.#startedAt.get(id) ?? 0 }));
  }

  canStart(endpointId: string): boolean {
    return !this.#o.broken(endpointId);
  }

  start(endpointId: string): void {
    const id = nextWorkerId(endpointId, [...this.#o.supervisor.workerIds(endpointId), ...this.#retiring]);
    const spec = this.#o.specFor(endpointId, id);
    const n = this.#o.gpus?.perWorker(endpointId) ?? 0;
    if (n > 0) {
      // The scale loop asks for a worker only when its GPUs are free.
      const devices = this.#o.gpus!.allocator.take(endpointId, id, n);
      if (!devices) return;
      this.#endpointOf.set(id, endpointId);
      spec.env = { ...spec.env, CUDA_VISIBLE_DEVICES: devices.join(',') };
    }
    this.#startedAt.set(id, Date.now());
    this.#o.supervisor.add(spec);
    this.sync(endpointId);
  }

  stop(endpointId: string, workerId: string): void {
    this.#retiring.add(workerId);
    void this.#o.supervisor.retire(workerId).then(() => {
      this.#retiring.delete(workerId);
      this.#startedAt.delete(workerId);
      this.#release(workerId);
      this.sync(endpointId);
    });
    // After the SIGTERM: no new job for it, and a pull worker's held polls answered so that it exits now.
    setTimeout(() => this.#o.workers.stopping(workerId), 200).unref();
  }

  /** Why the endpoint's queued jobs wait, as the supervisor sees it: crashing again and again, or a worker starting. */
  waitReason(endpointId: string): PoolWaitReason | undefined {
    const { starting, crashLoop } = this.#o.supervisor.startState(endpointId);
    return crashLoop ? 'crash_loop' : starting ? 'cold_start' : undefined;
  }

  #release(workerId: string): void {
    this.#endpointOf.delete(workerId);
    this.#o.gpus?.allocator.release(workerId);
  }

  /** Workers with a process count as expected; those not connected yet are `initializing` in /health. */
  sync(endpointId: string): void {
    this.#o.workers.setExpected(endpointId, this.#o.supervisor.workerIds(endpointId).length);
  }
}
