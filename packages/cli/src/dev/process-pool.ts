import type { WorkerControl } from '@berth/server';
import { nextWorkerId, type PoolWorker, type WorkerPool } from '@berth/server/scaling';
import type { WorkerSpec, WorkerSupervisor } from '../internal/supervisor.js';

export interface ProcessPoolOptions {
  supervisor: WorkerSupervisor;
  workers: WorkerControl;
  /** The process spec of worker `workerId` of an endpoint. */
  specFor: (endpointId: string, workerId: string) => WorkerSpec;
  /** Whether the endpoint's handler fails to build or load: no worker of it starts until it is fixed. */
  broken: (endpointId: string) => boolean;
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

  constructor(o: ProcessPoolOptions) {
    this.#o = o;
  }

  async refresh(): Promise<boolean> {
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
    this.#startedAt.set(id, Date.now());
    this.#o.supervisor.add(this.#o.specFor(endpointId, id));
    this.sync(endpointId);
  }

  stop(endpointId: string, workerId: string): void {
    this.#retiring.add(workerId);
    void this.#o.supervisor.retire(workerId).then(() => {
      this.#retiring.delete(workerId);
      this.#startedAt.delete(workerId);
      this.sync(endpointId);
    });
    // After the SIGTERM: no new job for it, and a pull worker's held polls answered so that it exits now.
    setTimeout(() => this.#o.workers.stopping(workerId), 200).unref();
  }

  /** Workers with a process count as expected; those not connected yet are `initializing` in /health. */
  sync(endpointId: string): void {
    this.#o.workers.setExpected(endpointId, this.#o.supervisor.workerIds(endpointId).length);
  }
}
