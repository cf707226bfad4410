/** One worker a pool has started and is not stopping: starting, connected or restarting. */
export interface PoolWorker {
  /** The worker id it connects with. */
  id: string;
  /** When it was started (epoch ms). */
  startedAt: number;
  /** Its start call is still under way (a container being created): never counted idle. */
  pending?: boolean;
}

/**
 * Where an endpoint's workers run, as the scale loop (`ScaleLoop`) drives them: processes for `berth dev`,
 * containers for `berth serve --scale docker`; load-balanced HTTP workers (their own servers behind the proxy)
 * would be a third. The loop decides with the policy; the pool only lists, starts and stops, and says what that
 * costs.
 */
export interface WorkerPool {
  /**
   * What a look at the pool and a start cost, as the loop's pace: a look every `tickMs` (a process table is
   * free, the Docker daemon answers a call); between looks, an endpoint at zero workers with a queued job is
   * looked for every `wakeMs` (0: never), so that a start that takes seconds begins at once.
   */
  readonly cost: { tickMs: number; wakeMs: number };
  /**
   * Whether its workers may be connected to another control-plane replica than this one (containers behind a
   * balancer): then, with no job queued or running anywhere, a worker not connected here counts as idle since
   * it started, so that replicas still scale to zero.
   */
  readonly sharedByReplicas: boolean;
  /**
   * Brings the pool's view up to date, once per look (a container listing: adopts, restarts, reaps). False: the
   * pool cannot answer now (the daemon is down, said in the log): the look ends there. `leading`: the first look
   * since this process took the scaling lease.
   */
  refresh(now: number, leading: boolean): Promise<boolean>;
  /** The endpoint's workers, oldest first: started and not being stopped. */
  list(endpointId: string): readonly PoolWorker[];
  /** Whether a new worker of the endpoint may start now (not with a handler that fails to load, in a crash backoff, ...). */
  canStart(endpointId: string, now: number): boolean;
  /** Starts one worker of the endpoint; returns at once (the start goes on in the background, in `list` already). */
  start(endpointId: string): void;
  /** Stops one idle worker (it drains, then exits); it leaves `list` at once. */
  stop(endpointId: string, workerId: string): void;
  /**
   * Why the endpoint's queued jobs wait, as the pool sees it: its image is missing (`image_missing`), its
   * workers exit soon after they start (`crash_loop`), a worker of it is starting (`cold_start`); `undefined`:
   * none of these. The loop gives it to `setWaitReason` (with `gpu` when it waits for devices).
   */
  waitReason?(endpointId: string): PoolWaitReason | undefined;
}

/** The wait reasons a pool knows (`WorkerPool.waitReason`). */
export type PoolWaitReason = 'image_missing' | 'crash_loop' | 'cold_start';
