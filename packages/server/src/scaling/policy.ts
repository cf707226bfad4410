/**
 * How an endpoint decides its worker count: RunPod's two scaler types. `request-count`: enough workers for the
 * queued plus running jobs at `jobsPerWorker` each. `queue-delay`: one more worker whenever jobs have been waiting
 * longer than `seconds` (one at a time: not while another worker is still starting).
 */
export type ScalerConfig =
  | { type: 'request-count'; jobsPerWorker?: number | undefined }
  | { type: 'queue-delay'; seconds: number };

/** An endpoint's scaling settings (from the config, defaults applied). */
export interface ScalingPolicy {
  minWorkers: number;
  maxWorkers: number;
  /** A worker above the floor with no job for this long is stopped. */
  idleTimeoutMs: number;
  /** Jobs one worker takes at once; `undefined` (the handler decides) is counted as 1. */
  concurrency: number | undefined;
  /** Default: `request-count` with `jobsPerWorker` = `concurrency` (what `berth dev` always did). */
  scaler?: ScalerConfig | undefined;
  /** Warm spares kept above demand while the endpoint has jobs (queued or running). Default 0. */
  bufferWorkers?: number | undefined;
}

/** What the scaler sees of one endpoint at one instant. */
export interface EndpointSnapshot {
  /** Jobs waiting in the queue. */
  inQueue: number;
  /** Jobs running on some worker. */
  inProgress: number;
  /**
   * How long (ms) jobs have been waiting: for `queue-delay`. The scalers pass the time since the queue was last
   * seen empty (an upper bound of the oldest queued job's wait). Undefined: the queue is empty.
   */
  queuedForMs?: number;
  /** Worker ids with a process or container (starting, connected or restarting), in the order they were started. */
  workers: readonly string[];
  /** Jobs each connected worker runs now (a worker not in the map has not connected yet). */
  running: ReadonlyMap<string, number>;
  /** Since when (epoch ms) each connected worker has had no job. */
  idleSince: ReadonlyMap<string, number>;
}

/** What to do: start this many workers, stop these. */
export interface ScalingDecision {
  start: number;
  stop: string[];
}

/**
 * The worker count the endpoint should have now, between `minWorkers` and `maxWorkers` (what the KEDA route
 * answers; `decide` acts on it).
 */
export function desiredWorkers(policy: ScalingPolicy, s: Omit<EndpointSnapshot, 'idleSince'>): number {
  const demand = s.inQueue + s.inProgress;
  const scaler = policy.scaler ?? { type: 'request-count' };
  // request-count: the queued and running jobs at jobsPerWorker each; queue-delay: the running jobs.
  let needed =
    scaler.type === 'request-count'
      ? Math.ceil(demand / (scaler.jobsPerWorker ?? policy.concurrency ?? 1))
      : Math.ceil(s.inProgress / (policy.concurrency ?? 1));
  if (demand > 0) needed += policy.bufferWorkers ?? 0;
  if (scaler.type === 'queue-delay' && s.inQueue > 0) {
    // While jobs wait: keep the workers there are; one more when the queue waited too long (and none is still
    // starting), or one when there is none at all.
    const starting = s.workers.some((id) => !s.running.has(id));
    const grow = s.workers.length === 0 || ((s.queuedForMs ?? 0) >= scaler.seconds * 1000 && !starting);
    needed = Math.max(needed, s.workers.length + (grow ? 1 : 0));
  }
  return Math.min(policy.maxWorkers, Math.max(policy.minWorkers, needed));
}

/**
 * Serverless-style scaling for one endpoint, as a pure function (the clock is `now`):
 * - scale up to `desiredWorkers`, never above `maxWorkers`, never below `minWorkers`;
 * - scale down a connected worker that has had no job for `idleTimeoutMs`, while the queue is empty, newest
 *   first, down to the desired count (`minWorkers` once no job is left).
 *
 * @example decide({ minWorkers: 0, maxWorkers: 2, idleTimeoutMs: 5000, concurrency: 1 }, snapshot, Date.now())
 */
export function decide(policy: ScalingPolicy, s: EndpointSnapshot, now: number): ScalingDecision {
  const desired = desiredWorkers(policy, s);
  if (s.workers.length < desired) return { start: desired - s.workers.length, stop: [] };
  const stop: string[] = [];
  if (s.inQueue > 0) return { start: 0, stop };
  let count = s.workers.length;
  for (const id of [...s.workers].reverse()) {
    if (count <= desired) break;
    const since = s.idleSince.get(id);
    if ((s.running.get(id) ?? 1) === 0 && since !== undefined && now - since >= policy.idleTimeoutMs) {
      stop.push(id);
      count--;
    }
  }
  return { start: 0, stop };
}

/** The lowest `<prefix>-<n>` worker id not in use. */
export function nextWorkerId(prefix: string, inUse: readonly string[]): string {
  const used = new Set(inUse);
  for (let n = 1; ; n++) {
    const id = `${prefix}-${n}`;
    if (!used.has(id)) return id;
  }
}
