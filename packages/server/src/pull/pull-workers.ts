import { BerthError } from '@berth/protocol';
import type { CoreContext } from '../jobs/context.js';
import type { Dispatcher } from '../jobs/dispatcher.js';
import type { WorkerReports } from '../jobs/worker-reports.js';
import { PullSession } from './pull-session.js';
import type { WorkerIdentity } from '../keys/worker-auth.js';

/** A job the worker got must show up in its pings after this long; two pings in a row without it and it is gone. */
const PING_GRACE_MS = 1000;
const MISSES_TO_DROP = 2;
/** runpod-python polls again within about 1 s of a failed poll; a worker silent this long after dropping one is gone. */
const ABANDONED_MS = 3000;

export interface PullWorkersDeps {
  ctx: CoreContext;
  dispatcher: Dispatcher;
  reports: WorkerReports;
  /** Whether an endpoint is served; `register` adds one a worker names (when allowed for its identity). */
  hasEndpoint(id: string): boolean;
  register(id: string, identity: WorkerIdentity): boolean;
}

/**
 * The pull workers: one `PullSession` per worker id, created by its first poll or report (never by a ping alone),
 * in the shared registry. Liveness: a worker is seen while it holds a poll or sends requests; its pings count
 * too, unless a held poll of it was dropped (its main process died while its heartbeat child pings on). Silent
 * for 3 heartbeat intervals (or 3 s after dropping a held poll), it is retired like a closed WebSocket: its jobs get the `workerGraceMs` lease. A
 * job its pings stop listing (a result lost on the way, a job it stopped) leaves it and is requeued if running.
 */
export class PullWorkers {
  private readonly byId = new Map<string, PullSession>();
  private readonly creating = new Map<string, Promise<PullSession>>();
  /** The last ping of each worker id, kept for a worker whose session is created after it. */
  private readonly pings = new Map<string, { ids: Set<string>; at: number }>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly deps: PullWorkersDeps) {
    const hb = deps.ctx.options.heartbeatMs;
    this.timer = setInterval(() => this.tick(), Math.max(50, Math.min(1000, hb / 2)));
    this.timer.unref();
  }

  /** The session of `workerId` on `endpointId`, created (adopting the jobs its last ping listed) if needed. */
  async session(workerId: string, endpointId: string, identity: WorkerIdentity): Promise<PullSession> {
    const { registry } = this.deps.ctx;
    const other = registry.get(workerId);
    if (other && !(other instanceof PullSession))
      throw new BerthError(
        'invalid_request',
        `worker id ${workerId} is connected over the WebSocket; give each worker its own id`,
      );
    const s = this.byId.get(workerId);
    if (s && !s.closed) {
      if (s.endpointId !== endpointId)
        throw new BerthError(
          'invalid_request',
          `worker ${workerId} serves endpoint ${s.endpointId}, not ${endpointId}`,
        );
      s.lastActive = performance.now();
      s.abandoned = false;
      return s;
    }
    if (!this.deps.hasEndpoint(endpointId) && !this.deps.register(endpointId, identity))
      throw new BerthError('endpoint_not_found', `endpoint ${endpointId} is not served here`);
    let pending = this.creating.get(workerId);
    if (!pending) {
      pending = this.create(workerId, endpointId).finally(() => this.creating.delete(workerId));
      this.creating.set(workerId, pending);
    }
    return pending;
  }

  private async create(workerId: string, endpointId: string): Promise<PullSession> {
    const { ctx, reports } = this.deps;
    const s = new PullSession(workerId, endpointId, performance.now(), (x) => void this.retire(x, 'terminated'));
    // Jobs the store holds for this worker id: those its last ping lists are its again, the others are requeued.
    const ping = this.pings.get(workerId);
    const refs: { id: string; attempt: number }[] = [];
    for (const id of ping?.ids ?? []) {
      const job = await ctx.store.get(id);
      if (job && job.workerId === workerId && job.status === 'IN_PROGRESS') refs.push({ id, attempt: job.attempt });
    }
    await reports.adopt(s, refs);
    s.markDelivered([...s.inflight.keys()].map((id) => ({ id, input: {} })));
    this.byId.set(workerId, s);
    ctx.registry.add(s);
    ctx.logger.info('pull worker connected', { workerId, endpointId, adopted: s.inflight.size });
    ctx.workerEvents.emit('connected', workerId, endpointId);
    return s;
  }

  /** Takes a session out of service once: held polls get 204, its jobs a lease (or the queue). */
  async retire(s: PullSession, why: string): Promise<void> {
    if (s.closed) return;
    s.closed = true;
    if (this.byId.get(s.workerId) === s) this.byId.delete(s.workerId);
    this.deps.ctx.registry.remove(s);
    s.release();
    this.deps.ctx.logger.info('pull worker gone', {
      workerId: s.workerId,
      endpointId: s.endpointId,
      why,
      running: s.inflight.size,
    });
    await this.deps.reports.onSessionClosed(s);
  }

  /** A ping: remembers the jobs it lists; jobs of the session it no longer lists leave the worker. */
  async onPing(workerId: string, endpointId: string, ids: Set<string>): Promise<void> {
    const now = performance.now();
    const ping = { ids, at: now };
    this.pings.set(workerId, ping);
    if (this.pings.size > 10_000) this.pings.delete(this.pings.keys().next().value!);
    const s = this.byId.get(workerId);
    if (!s || s.closed || s.endpointId !== endpointId) return;
    s.lastPing = ping;
    for (const [id, attempt] of [...s.inflight]) {
      const d = s.delivered.get(id);
      if (!d) continue; // not handed over yet
      if (ids.has(id)) d.misses = 0;
      else if (now - d.at >= PING_GRACE_MS && ++d.misses >= MISSES_TO_DROP) await this.dropJob(s, id, attempt);
    }
  }

  private async dropJob(s: PullSession, id: string, attempt: number): Promise<void> {
    const { store, logger } = this.deps.ctx;
    s.forget(id);
    const job = await store.get(id);
    if (job && job.status === 'IN_PROGRESS' && job.attempt === attempt && job.workerId === s.workerId) {
      await this.deps.dispatcher.requeue(job, 'its pull worker no longer lists it in its pings');
    } else logger.debug('job left its pull worker', { jobId: id, workerId: s.workerId, attempt, status: job?.status });
    this.deps.dispatcher.pump(s.endpointId);
  }

  /** Refreshes `lastSeen` from polls, requests and trusted pings; retires workers silent for 3 intervals. */
  private tick(): void {
    const now = performance.now();
    const hb = this.deps.ctx.options.heartbeatMs;
    for (const s of this.byId.values()) {
      if (s.take?.open || s.stopPoll?.open) s.lastSeen = now;
      else {
        s.lastSeen = Math.max(s.lastSeen, s.lastActive);
        const p = s.lastPing;
        if (!s.abandoned && p && [...s.inflight.keys()].some((id) => p.ids.has(id)))
          s.lastSeen = Math.max(s.lastSeen, p.at);
      }
      // A dropped poll not followed by another within ABANDONED_MS: the worker's process is gone.
      const gone = s.abandoned && !s.take?.open && !s.stopPoll?.open && now - s.lastActive > ABANDONED_MS;
      if (gone || now - s.lastSeen > 3 * hb)
        void this.retire(s, gone ? 'it dropped its polls' : 'its polls stopped').catch((err) =>
          this.deps.ctx.logger.error('pull worker retire failed', { workerId: s.workerId, err }),
        );
    }
  }

  /** Answers the held polls of a worker being stopped (it is marked draining: later polls are not held). */
  release(workerId: string): void {
    this.byId.get(workerId)?.release();
  }

  close(): void {
    clearInterval(this.timer);
    for (const s of this.byId.values()) s.release();
  }
}
