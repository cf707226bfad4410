/** An endpoint's scaling settings (from the config, defaults applied). */
export interface ScalingPolicy {
  minWorkers: number;
  maxWorkers: number;
  idleTimeoutMs: number;
  /** Jobs one worker takes at once; `undefined` (the handler decides) is counted as 1. */
  concurrency: number | undefined;
}

/** What the scaler sees of one endpoint at one instant. */
export interface EndpointSnapshot {
  /** Jobs waiting in the queue. */
  inQueue: number;
  /** Jobs running on some worker. */
  inProgress: number;
  /** Worker ids with a process (starting, connected or restarting), in the order they were started. */
  workers: string[];
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
 * Serverless-style scaling for one endpoint, as a pure function:
 * - scale up when queued plus running jobs need more workers than run (`concurrency` jobs each), up to
 *   `maxWorkers`; never below `minWorkers`;
 * - scale down a connected worker that has been without a job for `idleTimeoutMs`, while the queue is empty,
 *   newest first, down to `minWorkers`.
 *
 * @example decide({ minWorkers: 0, maxWorkers: 2, idleTimeoutMs: 5000, concurrency: 1 }, snapshot, Date.now())
 */
export function decide(policy: ScalingPolicy, s: EndpointSnapshot, now: number): ScalingDecision {
  const perWorker = policy.concurrency ?? 1;
  const needed = Math.ceil((s.inQueue + s.inProgress) / perWorker);
  const desired = Math.min(policy.maxWorkers, Math.max(policy.minWorkers, needed));
  if (s.workers.length < desired) return { start: desired - s.workers.length, stop: [] };
  const stop: string[] = [];
  if (s.inQueue > 0) return { start: 0, stop };
  let count = s.workers.length;
  for (const id of [...s.workers].reverse()) {
    if (count <= policy.minWorkers) break;
    const since = s.idleSince.get(id);
    if ((s.running.get(id) ?? 1) === 0 && since !== undefined && now - since >= policy.idleTimeoutMs) {
      stop.push(id);
      count--;
    }
  }
  return { start: 0, stop };
}

/** The lowest `<endpoint>-<n>` worker id not in use. */
export function nextWorkerId(endpointId: string, inUse: readonly string[]): string {
  const used = new Set(inUse);
  for (let n = 1; ; n++) {
    const id = `${endpointId}-${n}`;
    if (!used.has(id)) return id;
  }
}
