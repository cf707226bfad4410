import type { HealthReply } from '@berth/protocol';
import { systemClock, type Clock } from '../clock.js';
import { RemotePresence, type PresenceSnapshot } from '../cluster/presence.js';
import type { WorkerSession } from './worker-session.js';
import { FitnessReports } from './fitness-reports.js';
import type { ClaimLane } from '../store/types.js';

/** Why an endpoint's queued jobs wait, as the scaler sees it (`setWaitReason`); the others the registry knows. */
export type ScalerWaitReason = 'cold_start' | 'image_missing' | 'crash_loop' | 'low_priority' | 'gpu';
/** The `waitingFor` of an IN_QUEUE job (docs/api.md, "Why a job waits"). */
export type WaitingFor =
  | ScalerWaitReason
  | 'no_worker'
  | 'workers_busy'
  | 'workers_unhealthy'
  | 'handler_broken'
  | 'batch_lane';

/** Connected workers by endpoint and id, and what /health reports about them. */
export class WorkerRegistry {
  private readonly byEndpoint = new Map<string, Set<WorkerSession>>();
  private readonly byId = new Map<string, WorkerSession>();
  private readonly expected = new Map<string, number>();
  private readonly brokenHandlers = new Set<string>();
  private readonly schemas = new Map<string, Record<string, unknown> | null>();
  private readonly waitReasons = new Map<string, ScalerWaitReason>();
  private readonly gpus = new Map<string, NonNullable<HealthReply['gpus']>>();
  private rr = 0;
  /** Endpoints with a batch lane (`setBatchLane`) and the ids of their lane workers (`setLane`). */
  private readonly batchLanes = new Set<string>();
  private readonly laneWorkers = new Set<string>();
  /** Failed start-up checks that pull workers reported (each counts as an unhealthy worker for a while). */
  readonly fitness = new FitnessReports();
  /** Workers of the other replicas sharing the store (empty in a single process). */
  readonly remote = new RemotePresence();

  constructor(private readonly clock: Clock = systemClock) {}

  add(s: WorkerSession): void {
    s.connectedAt = this.clock.now();
    if (s.inflight.size > 0) s.warm = true; // reconnected with its jobs: not a fresh start
    this.fitness.clear(s.workerId);
    this.byId.set(s.workerId, s);
    this.schemas.set(s.endpointId, s.inputSchema ?? null);
    let set = this.byEndpoint.get(s.endpointId);
    if (!set) this.byEndpoint.set(s.endpointId, (set = new Set()));
    set.add(s);
  }

  remove(s: WorkerSession): void {
    if (this.byId.get(s.workerId) === s) this.byId.delete(s.workerId);
    this.byEndpoint.get(s.endpointId)?.delete(s);
  }

  get(workerId: string): WorkerSession | undefined {
    return this.byId.get(workerId);
  }

  sessions(endpointId?: string): WorkerSession[] {
    if (endpointId !== undefined) return [...(this.byEndpoint.get(endpointId) ?? [])];
    return [...this.byId.values()];
  }

  /**
   * The worker with the most free credits (ties rotate), or undefined when all are full. `lane`: among the
   * endpoint's batch lane workers only (`batch`) or its other workers only (`interactive`).
   */
  pick(endpointId: string, lane?: ClaimLane): WorkerSession | undefined {
    const set = this.byEndpoint.get(endpointId);
    if (!set || set.size === 0) return undefined;
    const list = [...set];
    const start = this.rr++ % list.length;
    let best: WorkerSession | undefined;
    for (let i = 0; i < list.length; i++) {
      const s = list[(start + i) % list.length]!;
      if (lane !== undefined && this.laneWorkers.has(s.workerId) !== (lane === 'batch')) continue;
      if (s.capacity > 0 && (!best || s.capacity > best.capacity)) best = s;
    }
    return best;
  }

  /**
   * The endpoint has a batch lane (issue #38): its lane workers claim released batch jobs only, its other workers
   * jobs of no batch only, and its queued batch jobs wait for `batch_lane`.
   */
  setBatchLane(endpointId: string, on: boolean): void {
    if (on) this.batchLanes.add(endpointId);
    else this.batchLanes.delete(endpointId);
  }

  hasBatchLane(endpointId: string): boolean {
    return this.batchLanes.size > 0 && this.batchLanes.has(endpointId);
  }

  /** The worker of this id (started by a pool, connected or not yet) is a batch lane worker (`batch`) or not. */
  setLane(workerId: string, lane: 'batch' | undefined): void {
    if (lane === 'batch') this.laneWorkers.add(workerId);
    else this.laneWorkers.delete(workerId);
  }

  isLaneWorker(workerId: string): boolean {
    return this.laneWorkers.has(workerId);
  }

  /** Whether the endpoint's workers (on any replica) stream: true/false once any worker announced it, undefined before. */
  streams(endpointId: string): boolean | undefined {
    const remote = this.remote.streams(endpointId);
    const local = this.localStreams(endpointId);
    return local === undefined ? remote : local || remote === true;
  }

  private localStreams(endpointId: string): boolean | undefined {
    const set = this.byEndpoint.get(endpointId);
    if (!set || set.size === 0) return undefined;
    for (const s of set) if (s.stream) return true;
    return false;
  }

  /** Workers of the endpoint that count towards its rate limit, on every replica (connected, not draining). */
  limitWorkers(endpointId: string): number {
    return this.localLimitWorkers(endpointId) + this.remote.limitWorkers(endpointId);
  }

  private localLimitWorkers(endpointId: string): number {
    let n = 0;
    for (const s of this.byEndpoint.get(endpointId) ?? []) if (!s.draining && !s.closed) n++;
    return n;
  }

  /** This replica's own workers, per endpoint that has any (or expects some): what it tells the other replicas. */
  localPresence(now: number, heartbeatMs: number): PresenceSnapshot {
    const out: PresenceSnapshot = {};
    for (const ep of new Set([...this.byEndpoint.keys(), ...this.expected.keys(), ...this.fitness.endpoints()])) {
      const workers = this.localHealth(ep, now, heartbeatMs);
      if (Object.values(workers).every((n) => n === 0)) continue;
      const streams = this.localStreams(ep);
      out[ep] = { workers, limit: this.localLimitWorkers(ep), ...(streams !== undefined ? { streams } : {}) };
    }
    return out;
  }

  /** The input JSON Schema the endpoint's most recently connected worker announced (kept while it scales to zero). */
  inputSchema(endpointId: string): Record<string, unknown> | null {
    return this.schemas.get(endpointId) ?? null;
  }

  /** The largest `batch.maxSize` the endpoint's connected workers announce here (0: none is a batch handler). */
  batchMaxSize(endpointId: string): number {
    let max = 0;
    for (const s of this.byEndpoint.get(endpointId) ?? []) max = Math.max(max, s.batchMaxSize ?? 0);
    return max;
  }

  /** Workers the supervisor started for an endpoint; those not yet connected count as initializing. */
  setExpected(endpointId: string, n: number): void {
    this.expected.set(endpointId, Math.max(0, Math.floor(n)));
  }

  /** berth dev: the endpoint's handler failed to load (or compile) and no worker can start: one `unhealthy` in health. */
  setHandlerBroken(endpointId: string, broken: boolean): void {
    if (broken) this.brokenHandlers.add(endpointId);
    else this.brokenHandlers.delete(endpointId);
  }

  /** The endpoint's workers on every replica, as /health reports them. */
  health(endpointId: string, now: number, heartbeatMs: number): HealthReply['workers'] {
    return this.remote.addWorkers(endpointId, this.localHealth(endpointId, now, heartbeatMs));
  }

  private localHealth(endpointId: string, now: number, heartbeatMs: number): HealthReply['workers'] {
    const list = this.sessions(endpointId);
    const w = { idle: 0, initializing: 0, ready: 0, running: 0, throttled: 0, unhealthy: 0 };
    for (const s of list) {
      if (now - s.lastSeen > 1.5 * heartbeatMs) w.unhealthy++;
      else if (s.draining) w.throttled++;
      else if (s.inflight.size > 0) w.running++;
      else w.idle++;
      if (s.capacity > 0) w.ready++;
    }
    w.initializing = Math.max(0, (this.expected.get(endpointId) ?? 0) - list.length);
    if (this.brokenHandlers.has(endpointId)) w.unhealthy++;
    w.unhealthy += this.fitness.failures(endpointId, now).length;
    return w;
  }

  /**
   * The scaler's word on why the endpoint's queue waits (a container starting, its image missing, workers crash-
   * looping, no GPU free for another worker, lowPriority jobs it does not scale for); `undefined` clears it. Read by `waitingFor`.
   */
  setWaitReason(endpointId: string, reason: ScalerWaitReason | undefined): void {
    if (reason === undefined) this.waitReasons.delete(endpointId);
    else this.waitReasons.set(endpointId, reason);
  }

  /** The scaler's reason now (`setWaitReason`), if any: `gpu` while a worker it wants waits for devices. */
  scalerReason(endpointId: string): ScalerWaitReason | undefined {
    return this.waitReasons.get(endpointId);
  }

  /** The GPUs the scaler's workers of the endpoint hold (`setGpus`): `/health`'s `gpus`, on this process only. */
  setGpus(endpointId: string, held: readonly { workerId: string; devices: readonly string[] }[]): void {
    if (held.length === 0) this.gpus.delete(endpointId);
    else
      this.gpus.set(
        endpointId,
        held.map((h) => ({ workerId: h.workerId, devices: [...h.devices] })),
      );
  }

  gpusOf(endpointId: string): HealthReply['gpus'] {
    return this.gpus.get(endpointId);
  }

  /**
   * Why a queued job of the endpoint waits now: the scaler's reason when it set one (`low_priority` only for a
   * lowPriority job), else what the workers of every replica say: a broken handler, none connected (workers
   * started and not yet connected: `cold_start`; only failed fitness reports: `workers_unhealthy`), or all busy.
   * A `batch` job of an endpoint with a batch lane waits for `batch_lane` (its lane workers, started for it).
   */
  waitingFor(endpointId: string, lowPriority: boolean, now: number, heartbeatMs: number, batch = false): WaitingFor {
    if (batch && this.hasBatchLane(endpointId)) return 'batch_lane';
    const scaler = this.waitReasons.get(endpointId);
    if (scaler !== undefined && (scaler !== 'low_priority' || lowPriority)) return scaler;
    if (this.brokenHandlers.has(endpointId)) return 'handler_broken';
    if (this.limitWorkers(endpointId) > 0) return 'workers_busy';
    const w = this.health(endpointId, now, heartbeatMs);
    if (w.initializing > 0) return 'cold_start';
    return w.unhealthy > 0 ? 'workers_unhealthy' : 'no_worker';
  }
}
