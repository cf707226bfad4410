import type { AssignMessage, ServerMessage } from '@berth/protocol';
import type { WorkerSession } from '../workers/worker-session.js';
import type { HeldPoll } from './held-poll.js';

/** The job object job-take answers: RunPod's `{"id", "input", ...}`. */
export interface PulledJob {
  id: string;
  input: Record<string, unknown>;
  s3Config?: unknown;
  /** Its batch: runpod-python 1.12 prefixes the handler's log lines with `[batchId=...]`. */
  batchId?: string;
}

/** Milliseconds between two offers of the same stop (a stop that reaches the worker too early is dropped by it). */
export const STOP_REOFFER_MS = 1000;
const MAX_OFFERS_WITHOUT_PINGS = 60;

/**
 * A worker speaking RunPod's HTTP pull protocol (`job-take`, `job-done`, `job-stop`, `ping`), seen by the
 * registry and the dispatcher like a WebSocket worker. Its credits are the slots of the job-take poll it holds
 * now: none between polls. What the dispatcher "sends" is kept here until a poll carries it: assigned jobs
 * answer the held job-take, stops answer the held job-stop (and are offered again while the job is running).
 */
export class PullSession implements WorkerSession {
  /** Pull workers connect with no worker token of their own. */
  readonly credentialId = '';
  /** It may post stream chunks (`job-stream`). */
  readonly stream = true;
  readonly inputSchema = undefined;
  readonly batchMaxSize = undefined;
  /** The jobs the last take carried that are still held (set when a take is answered). */
  concurrency = 0;
  readonly inflight = new Map<string, number>();
  reserved = 0;
  draining = false;
  closed = false;
  /** performance.now() of the last sign of life: a held poll, a request, a trusted ping (`PullWorkers.tick`). */
  lastSeen: number;
  connectedAt = 0;
  warm = false;
  /** The held job-take poll and the number of jobs it asked for. */
  take: HeldPoll<PulledJob[]> | undefined;
  offered = 0;
  /** Jobs assigned since the held take was answered (or gone): they answer the next take. */
  readonly undelivered: PulledJob[] = [];
  private flushing = false;
  /** The held job-stop poll. */
  stopPoll: HeldPoll<string[]> | undefined;
  /** Stops to offer: job id -> attempt, when last offered (performance.now()) and how often. */
  readonly stops = new Map<string, { attempt: number; offeredAt: number; offers: number }>();
  /** Per running job: when it reached the worker, pings in a row that did not list it, stream chunks received. */
  readonly delivered = new Map<string, { at: number; misses: number; seq: number }>();
  /** performance.now() of the last request other than a ping (start or end). */
  lastActive: number;
  /** A held poll was dropped by the worker (its process died?): its pings alone no longer prove it is alive. */
  abandoned = false;
  /** The last ping: the job ids it listed and when (performance.now()). */
  lastPing: { ids: Set<string>; at: number } | undefined;

  constructor(
    readonly workerId: string,
    readonly endpointId: string,
    now: number,
    private readonly onTerminate: (s: PullSession) => void,
  ) {
    this.lastSeen = now;
    this.lastActive = now;
  }

  /** Free slots: those of the held job-take not yet filled. */
  get capacity(): number {
    if (this.draining || this.closed || !this.take) return 0;
    return Math.max(0, this.offered - this.reserved - this.undelivered.length);
  }

  hold(id: string, attempt: number): void {
    this.inflight.set(id, attempt);
  }

  send(msg: ServerMessage): boolean {
    if (this.closed) return false;
    switch (msg.type) {
      case 'job.assign':
        this.assign(msg);
        return true;
      case 'job.cancel':
        if (!this.stops.has(msg.id)) this.stops.set(msg.id, { attempt: msg.attempt, offeredAt: -Infinity, offers: 0 });
        this.stopPoll?.wake();
        return true;
      case 'drain':
        this.draining = true;
        this.release();
        return true;
      default:
        return true; // welcome, acks, pings: nothing to tell a pull worker
    }
  }

  private assign(msg: AssignMessage): void {
    const job: PulledJob = { id: msg.id, input: msg.input, ...(msg.s3Config ? { s3Config: msg.s3Config } : {}) };
    if (msg.batchId !== undefined) job.batchId = msg.batchId;
    this.undelivered.push(job);
    // The claims of one dispatch pass land in the same turn: answer the take once with all of them.
    if (this.flushing || !this.take) return;
    this.flushing = true;
    setImmediate(() => {
      this.flushing = false;
      this.answerTake();
    });
  }

  /** Answers the held take with the jobs waiting (at most what it asked for), or 204 when there are none. */
  answerTake(): void {
    const take = this.take;
    if (!take) return;
    this.take = undefined;
    const jobs = this.undelivered.splice(0, Math.max(1, this.offered));
    this.offered = 0;
    this.markDelivered(jobs);
    this.concurrency = this.inflight.size;
    take.answer(jobs);
  }

  markDelivered(jobs: PulledJob[]): void {
    const now = performance.now();
    for (const j of jobs) this.delivered.set(j.id, { at: now, misses: 0, seq: 0 });
  }

  /** Stops due now: for jobs still running here, never offered or offered at least STOP_REOFFER_MS ago. */
  dueStops(now: number): { due: string[]; nextAt: number | undefined } {
    const due: string[] = [];
    let nextAt: number | undefined;
    for (const [id, s] of this.stops) {
      if (this.inflight.get(id) !== s.attempt) {
        this.stops.delete(id);
        continue;
      }
      // A worker that sends no pings never says it dropped the job: give up on it after a minute of offers.
      if (!this.lastPing && s.offers >= MAX_OFFERS_WITHOUT_PINGS) {
        this.forget(id);
        continue;
      }
      const at = s.offeredAt + STOP_REOFFER_MS;
      if (at <= now) {
        due.push(id);
        s.offeredAt = now;
        s.offers++;
      } else nextAt = Math.min(nextAt ?? at, at);
    }
    return { due, nextAt };
  }

  /** Forgets a job that left this worker (result stored, or dropped by the worker). */
  forget(id: string): void {
    this.inflight.delete(id);
    this.delivered.delete(id);
    this.stops.delete(id);
  }

  /** Takes the worker out of service: the monitor retires it (its jobs get the worker-loss lease). */
  terminate(): void {
    this.onTerminate(this);
  }

  close(): void {
    this.onTerminate(this);
  }

  /** Answers whatever polls are held (204), so a worker still there polls again. */
  release(): void {
    this.answerTake();
    this.stopPoll?.answer([]);
    this.stopPoll = undefined;
  }
}
