import type { JobRecord } from '../store/types.js';

/** What the control plane tells a scaler, as events. */
export interface WorkerEventMap {
  /** A worker has connected and been welcomed (its process reached the control plane): its id and endpoint. */
  connected: [workerId: string, endpointId: string];
  /** A job reached a terminal state in this process (a scaler times its workers' cold starts). */
  jobFinished: [job: JobRecord];
}

/** The listeners of `WorkerControl.on`, and their calls (the server emits; a listener that throws is its own bug). */
export class WorkerEvents {
  readonly #listeners: { [K in keyof WorkerEventMap]: Set<(...args: WorkerEventMap[K]) => void> } = {
    connected: new Set(),
    jobFinished: new Set(),
  };

  on<K extends keyof WorkerEventMap>(event: K, fn: (...args: WorkerEventMap[K]) => void): () => void {
    const set = this.#listeners[event] as Set<(...args: WorkerEventMap[K]) => void>;
    set.add(fn);
    return () => void set.delete(fn);
  }

  emit<K extends keyof WorkerEventMap>(event: K, ...args: WorkerEventMap[K]): void {
    for (const fn of this.#listeners[event] as Set<(...args: WorkerEventMap[K]) => void>) fn(...args);
  }
}
