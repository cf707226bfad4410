import type { WorkerEventMap } from '../jobs/worker-events.js';
import type { ColdStartPhase, StartFailure } from '../metrics/scaler-metrics.js';
import type { ScalerWaitReason } from '../workers/worker-registry.js';

/** A worker connected to this control plane, with the jobs it runs now. */
export interface ConnectedWorker {
  workerId: string;
  running: number;
  draining: boolean;
  /** A batch lane worker (`setLane`). */
  lane?: 'batch';
}

/**
 * The server's one surface for whoever starts and stops workers (`server.workers`): what it sees of them, what
 * it is told about them, and its events. `berth dev`, `berth serve --scale docker` and an embedding program use
 * it; the API does not.
 */
export interface WorkerControl {
  /** Connected workers of an endpoint, with the jobs each runs now. */
  connected(endpointId: string): ConnectedWorker[];
  /** Workers started for an endpoint (those not yet connected count as `initializing` in /health). */
  setExpected(endpointId: string, n: number): void;
  /** Whether no worker of the endpoint can start (a handler that fails to load, a missing image): one `unhealthy` worker in /health. */
  setBroken(endpointId: string, broken: boolean): void;
  /**
   * Why the endpoint's queued jobs wait, as the scaler sees it: a worker starting (`cold_start`), its image missing
   * (`image_missing`), workers crash-looping (`crash_loop`), no GPU free for another worker (`gpu`), only lowPriority jobs queued and it starts no worker
   * for them (`low_priority`); `undefined` once none holds. Queued jobs' `waitingFor` on `/status` and `/health`
   * (docs/api.md, "Why a job waits"); on this process only.
   */
  setWaitReason(endpointId: string, reason: ScalerWaitReason | undefined): void;
  /**
   * The GPUs the endpoint's workers hold now (`GpuAllocator`: a worker starting holds its devices already), shown
   * as `/health`'s `gpus`; an empty list clears it. On this process only.
   */
  setGpus(endpointId: string, held: readonly { workerId: string; devices: readonly string[] }[]): void;
  /**
   * The endpoint has a batch lane (issue #38, config `batch.maxWorkers`): its lane workers (`setLane`) run its
   * released batch jobs only, its other workers jobs of no batch only; queued batch jobs wait for `batch_lane`.
   */
  setBatchLane(endpointId: string, on: boolean): void;
  /** The worker of this pool-assigned id is a batch lane worker (`batch`; call before it connects) or no longer. */
  setLane(workerId: string, lane: 'batch' | undefined): void;
  /** Released batch jobs of the endpoint queued now: the batch lane's backlog (what its scale loop looks at). */
  batchBacklog(endpointId: string): Promise<number>;
  /**
   * This worker is being stopped (scale-down): no new job goes to it, and a pull worker's held polls are answered
   * (runpod-python exits on SIGTERM only once they return).
   */
  stopping(workerId: string): void;
  /** A worker's cold start was timed (`berth_worker_cold_start_seconds` in /metrics). */
  coldStart(endpointId: string, phase: ColdStartPhase, ms: number): void;
  /** A worker could not be started (`berth_worker_start_failures_total` in /metrics). */
  startFailed(endpointId: string, reason: StartFailure): void;
  /** Subscribes to an event; returns the unsubscribe function. */
  on<K extends keyof WorkerEventMap>(event: K, fn: (...args: WorkerEventMap[K]) => void): () => void;
}
