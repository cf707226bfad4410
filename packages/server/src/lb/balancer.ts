import { Agent } from 'node:http';
import { BerthError } from '@berth/protocol';
import type { AbortLike } from '../core/abort.js';
import type { Affinity } from './affinity.js';

/** Where a worker's HTTP server listens (`PORT`) and its health (`PORT_HEALTH`). */
export interface LbAddress {
  host: string;
  port: number;
  healthPort: number;
}

/**
 * `starting`: launched, its health not answered yet; `initializing`: health answers 204; `ready`: 200 (only these
 * get requests); `unhealthy`: a ready worker whose health or connection failed (no requests until 200 again).
 */
export type LbWorkerState = 'starting' | 'initializing' | 'ready' | 'unhealthy';

export interface LbWorker extends LbAddress {
  id: string;
  endpointId: string;
  state: LbWorkerState;
  /** No new request: being stopped (scale-down) or replaced; in-flight ones finish. */
  draining: boolean;
  inFlight: number;
  /** Keep-alive connections to its HTTP server. */
  agent: Agent;
  addedAt: number;
  readyAt: number | undefined;
  /** Failed health checks in a row. */
  failures: number;
  /** Resolvers of `drain()`: called once in-flight reaches 0. */
  idle: (() => void)[];
}

interface Waiter {
  endpointId: string;
  /** Only this worker (strict modes). */
  only: string | undefined;
  /** Prefer this worker (soft). */
  prefer: string | undefined;
  /** `strict-resume`: a worker stopped by scale-down while this waits is asked back. */
  resume: boolean;
  since: number;
  resolve: (w: LbWorker) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  done: boolean;
}

/** Ids stopped by scale-down remembered per endpoint for `strict-resume` (bounded). */
const RETIRED_KEPT = 256;

/**
 * The workers of load-balancing endpoints and the requests waiting for one: picks a ready worker with room (least
 * in flight; the affinity header's worker first), else queues the request (bounded wait) until one frees up or
 * becomes ready. What the scaler reads: requests waiting and in flight per endpoint.
 */
export class Balancer {
  readonly #workers = new Map<string, LbWorker>();
  readonly #waiters: Waiter[] = [];
  readonly #retired = new Map<string, string[]>();
  readonly #concurrency: (endpointId: string) => number;
  /** Called when a request starts waiting with no worker to take it (scale up at once). */
  onDemand: (endpointId: string) => void = () => {};
  /** Called by `strict-resume` for a worker stopped by scale-down: start it again under its id; false: cannot. */
  onResume: (endpointId: string, workerId: string) => boolean = () => false;

  /** Endpoints whose workers cannot start (a command that fails), with why: requests fail at once. */
  readonly #broken = new Map<string, string>();

  constructor(concurrency: (endpointId: string) => number) {
    this.#concurrency = concurrency;
  }

  add(endpointId: string, id: string, at: LbAddress, now: number): LbWorker {
    this.#workers.get(id)?.agent.destroy();
    const list = this.#retired.get(endpointId);
    if (list?.includes(id)) list.splice(list.indexOf(id), 1);
    const w: LbWorker = {
      ...at,
      id,
      endpointId,
      state: 'starting',
      draining: false,
      inFlight: 0,
      agent: new Agent({ keepAlive: true, maxSockets: 256 }),
      addedAt: now,
      readyAt: undefined,
      failures: 0,
      idle: [],
    };
    this.#workers.set(id, w);
    return w;
  }

  get(id: string): LbWorker | undefined {
    return this.#workers.get(id);
  }

  workers(endpointId?: string): LbWorker[] {
    const all = [...this.#workers.values()];
    return endpointId === undefined ? all : all.filter((w) => w.endpointId === endpointId);
  }

  /** Requests of the endpoint waiting for a worker, and since when the oldest waits. */
  waiting(endpointId: string): { count: number; oldest: number | undefined } {
    let count = 0;
    let oldest: number | undefined;
    for (const w of this.#waiters)
      if (w.endpointId === endpointId) {
        count++;
        oldest ??= w.since;
      }
    return { count, oldest };
  }

  setState(w: LbWorker, state: LbWorkerState): void {
    w.state = state;
    if (state === 'ready') this.#dispatch();
  }

  /** No new request goes to it; resolves once its in-flight requests are done. */
  drain(id: string): Promise<void> {
    const w = this.#workers.get(id);
    if (!w) return Promise.resolve();
    w.draining = true;
    if (w.inFlight === 0) return Promise.resolve();
    return new Promise((r) => w.idle.push(r));
  }

  /** Takes it back into rotation after a replacement under the same id (health decides when it is ready). */
  undrain(id: string): void {
    const w = this.#workers.get(id);
    if (w) w.draining = false;
  }

  /** It is gone. `scaledDown`: stopped while idle, so `strict-resume` may ask for it back. */
  remove(id: string, scaledDown: boolean): void {
    const w = this.#workers.get(id);
    if (!w) return;
    this.#workers.delete(id);
    w.agent.destroy();
    for (const r of w.idle.splice(0)) r();
    if (scaledDown) {
      const list = this.#retired.get(w.endpointId) ?? [];
      list.push(id);
      if (list.length > RETIRED_KEPT) list.shift();
      this.#retired.set(w.endpointId, list);
    }
    // Strict requests waiting for it: gone (strict-resume ones ask for it back).
    for (const waiter of this.#waiters.filter((x) => x.only === id)) {
      if (scaledDown && waiter.resume && this.onResume(w.endpointId, id)) continue;
      this.#settle(waiter, gone(id));
    }
  }

  /**
   * A worker for one request (its `inFlight` counted; call `release`): at once when one has room (no promise), else
   * a promise that waits up to `waitMs` (`affinityWaitMs` for strict modes) and stops waiting when `signal` aborts.
   */
  acquire(
    endpointId: string,
    affinity: Affinity,
    waits: { coldStartMs: number; affinityMs: number },
    now: () => number,
    signal?: AbortLike,
  ): LbWorker | Promise<LbWorker> {
    const strict = affinity.mode === 'strict' || affinity.mode === 'strict-resume';
    const pinned = affinity.mode === 'none' ? undefined : affinity.workerId;
    if (strict) {
      const w = this.#workers.get(pinned!);
      if (!w || w.endpointId !== endpointId) {
        const retired = this.#retired.get(endpointId)?.includes(pinned!) === true;
        if (!(affinity.mode === 'strict-resume' && retired && this.onResume(endpointId, pinned!)))
          return Promise.reject(gone(pinned!));
      }
    }
    const picked = this.#pick(endpointId, strict ? pinned : undefined, pinned);
    if (picked) {
      picked.inFlight++;
      return picked;
    }
    const why = this.#broken.get(endpointId);
    if (why !== undefined) return Promise.reject(unstartable(endpointId, why));
    return new Promise<LbWorker>((resolve, reject) => {
      // strict-resume may have to start its worker again: it waits at least as long as a cold start.
      const waitMs = !strict
        ? waits.coldStartMs
        : affinity.mode === 'strict-resume'
          ? Math.max(waits.affinityMs, waits.coldStartMs)
          : waits.affinityMs;
      const waiter: Waiter = {
        endpointId,
        only: strict ? pinned : undefined,
        prefer: pinned,
        resume: affinity.mode === 'strict-resume',
        since: now(),
        resolve,
        reject,
        done: false,
        timer: setTimeout(
          () =>
            this.#settle(
              waiter,
              strict
                ? new BerthError(
                    'worker_timeout',
                    `timed out waiting for worker ${pinned} (${waitMs} ms, affinityWaitMs)`,
                    { workerId: pinned },
                  )
                : new BerthError(
                    'no_workers_available',
                    `no worker of ${endpointId} was ready to take the request within ${waitMs} ms (coldStartWaitMs); retry`,
                  ),
            ),
          waitMs,
        ),
      };
      this.#waiters.push(waiter);
      signal?.addEventListener('abort', () => this.#settle(waiter, new BerthError('unavailable', 'client gone')), {
        once: true,
      });
      if (!strict) this.onDemand(endpointId);
    });
  }

  /** The endpoint's workers cannot start (`why`), or can again (`undefined`): waiting requests fail at once. */
  setBroken(endpointId: string, why: string | undefined): void {
    if (why === undefined) return void this.#broken.delete(endpointId);
    this.#broken.set(endpointId, why);
    for (const w of this.#waiters.filter((x) => x.endpointId === endpointId))
      this.#settle(w, unstartable(endpointId, why));
  }

  /** A request is done with its worker. */
  release(w: LbWorker): void {
    w.inFlight--;
    if (w.inFlight === 0 && w.draining) for (const r of w.idle.splice(0)) r();
    this.#dispatch();
  }

  #pick(endpointId: string, only: string | undefined, prefer: string | undefined): LbWorker | undefined {
    const max = this.#concurrency(endpointId);
    const free = (w: LbWorker | undefined) =>
      w !== undefined && w.endpointId === endpointId && w.state === 'ready' && !w.draining && w.inFlight < max;
    if (only !== undefined) {
      const w = this.#workers.get(only);
      return free(w) ? w : undefined;
    }
    if (prefer !== undefined) {
      const w = this.#workers.get(prefer);
      if (free(w)) return w;
    }
    let best: LbWorker | undefined;
    for (const w of this.#workers.values()) if (free(w) && (best === undefined || w.inFlight < best.inFlight)) best = w;
    return best;
  }

  /**
   * Hands waiting requests, oldest first, to workers with room. Once a request not pinned to one worker finds none,
   * its endpoint has no worker with room: the endpoint's later requests are not tried (with `concurrency` 1 and
   * many waiting, every answer would otherwise try them all).
   */
  #dispatch(): void {
    if (this.#waiters.length === 0) return;
    let full: Set<string> | undefined;
    for (const waiter of [...this.#waiters]) {
      if (waiter.done || full?.has(waiter.endpointId)) continue;
      const w = this.#pick(waiter.endpointId, waiter.only, waiter.prefer);
      if (!w) {
        if (waiter.only === undefined) (full ??= new Set()).add(waiter.endpointId);
        continue;
      }
      w.inFlight++;
      this.#settle(waiter, w);
    }
  }

  #settle(waiter: Waiter, outcome: LbWorker | Error): void {
    if (waiter.done) {
      if (!(outcome instanceof Error)) this.release(outcome);
      return;
    }
    waiter.done = true;
    clearTimeout(waiter.timer);
    this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
    if (outcome instanceof Error) waiter.reject(outcome);
    else waiter.resolve(outcome);
  }

  close(): void {
    for (const w of this.#waiters.splice(0)) {
      clearTimeout(w.timer);
      w.done = true;
      w.reject(new BerthError('unavailable', 'the server is shutting down'));
    }
    for (const w of this.#workers.values()) w.agent.destroy();
  }
}

function gone(workerId: string): BerthError {
  return new BerthError('affinity_worker_gone', `worker ${workerId} is not among the endpoint's workers`, {
    reason: 'affinity_worker_gone',
    workerId,
  });
}

function unstartable(endpointId: string, why: string): BerthError {
  return new BerthError('no_workers_available', `no worker of ${endpointId} can start: ${why}`, { reason: why });
}
