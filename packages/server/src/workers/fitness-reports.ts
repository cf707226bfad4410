/** A worker's failed start-up check, as its fitness report named it. */
export interface FitnessFailure {
  workerId: string;
  endpointId: string;
  /** The check's name (runpod-python: the function's name). */
  check: string;
  /** Why it failed (runpod-python: `<ExceptionType>: <message>`, at most 256 characters). */
  reason: string;
  /** The worker's SDK version (`runpod_version`), when it said. */
  runpodVersion?: string;
  /** performance.now() of the report. */
  at: number;
}

/** How long a fitness failure counts as an unhealthy worker after its report (the worker itself exits). */
export const FITNESS_KEEP_MS = 5 * 60_000;
const MAX_KEPT = 10_000;

/**
 * Workers that reported a failed start-up check (`GET <ping url>?status=unhealthy&check=&reason=`, runpod-python
 * 1.11+): each counts as one `unhealthy` worker of its endpoint for `FITNESS_KEEP_MS`, or until a worker of the
 * same id connects (a restarted container that passed its checks).
 */
export class FitnessReports {
  private readonly byWorker = new Map<string, FitnessFailure>();

  report(f: FitnessFailure): void {
    this.byWorker.delete(f.workerId);
    this.byWorker.set(f.workerId, f);
    if (this.byWorker.size > MAX_KEPT) this.byWorker.delete(this.byWorker.keys().next().value!);
  }

  /** A worker of this id connected: its earlier failure no longer counts. */
  clear(workerId: string): void {
    this.byWorker.delete(workerId);
  }

  /** The endpoint's failures of the last `FITNESS_KEEP_MS`, oldest first (older ones are dropped here). */
  failures(endpointId: string, now: number): FitnessFailure[] {
    const out: FitnessFailure[] = [];
    for (const [id, f] of this.byWorker) {
      if (now - f.at > FITNESS_KEEP_MS) this.byWorker.delete(id);
      else if (f.endpointId === endpointId) out.push(f);
    }
    return out;
  }

  /** Endpoints with a failure kept. */
  endpoints(): Set<string> {
    return new Set([...this.byWorker.values()].map((f) => f.endpointId));
  }
}
