import { BerthError, type HealthReply } from '@berth/protocol';
import type { Logger } from '@berth/protocol/log';
import type { IncomingMessage } from 'node:http';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import { parseAffinity, WORKER_ID_HEADER } from './affinity.js';
import { Balancer, type LbAddress, type LbWorker } from './balancer.js';
import { downstreamHeaders, forward } from './forward.js';
import { HealthPoller } from './health-poller.js';
import type { LbMetrics } from './lb-metrics.js';
import { resolveLbEndpoint, type LbEndpointOptions, type ResolvedLbEndpoint } from './options.js';

/**
 * What whoever runs the HTTP workers (`berth dev`'s process pool, a Docker pool) tells the server, and hears from
 * it: `server.lb`.
 */
export interface LbControl {
  /** Whether the endpoint is a load-balancing one. */
  has(endpointId: string): boolean;
  /** A worker was started: its server will listen at `at` (health checks begin; requests once `/ping` says 200). */
  add(endpointId: string, workerId: string, at: LbAddress): void;
  /** No new request for it; resolves once its in-flight requests are done (scale-down, replacement). */
  drain(workerId: string): Promise<void>;
  /** Back in rotation after a replacement under the same id (ready again once its health says 200). */
  restarted(workerId: string): void;
  /** It is gone. `scaledDown`: stopped while idle, so `strict-resume` may start it again. */
  remove(workerId: string, scaledDown: boolean): void;
  /** The endpoint's workers cannot start (a command that fails: `why`), or can again (`undefined`). */
  setBroken(endpointId: string, why: string | undefined): void;
  /** Ready workers with their requests in flight (the scaler's `connected`). */
  connected(endpointId: string): { workerId: string; running: number; draining: boolean }[];
  /** Requests waiting for a worker (the scaler's queue) and in flight. */
  counts(endpointId: string): { waiting: number; inFlight: number; waitedMs: number | undefined };
  /** Hooks of the pool: scale up now, replace an unhealthy worker, start a scaled-down one again, a worker became ready. */
  hooks: {
    demand?: (endpointId: string) => void;
    unhealthy?: (endpointId: string, workerId: string) => void;
    resume?: (endpointId: string, workerId: string) => boolean;
    ready?: (endpointId: string, workerId: string) => void;
  };
}

export interface LbServiceOptions {
  endpoints: Record<string, LbEndpointOptions>;
  logger: Logger;
  metrics: LbMetrics;
  now: () => number;
}

/**
 * Load-balancing endpoints (docs/load-balancing.md): `ANY /v2/<ep>/lb/<path>` forwarded to a ready worker's own
 * HTTP server, its answer streamed back with `X-Runpod-Worker-Id`, RunPod's affinity modes, bounded waits.
 */
export class LbService implements LbControl {
  readonly #config = new Map<string, ResolvedLbEndpoint>();
  readonly #balancer: Balancer;
  readonly #poller: HealthPoller;
  readonly #o: LbServiceOptions;
  readonly hooks: LbControl['hooks'] = {};

  constructor(o: LbServiceOptions) {
    this.#o = o;
    for (const [id, ep] of Object.entries(o.endpoints)) this.#config.set(id, resolveLbEndpoint(id, ep));
    this.#balancer = new Balancer((id) => this.#cfg(id).concurrency);
    this.#balancer.onDemand = (id) => this.hooks.demand?.(id);
    this.#balancer.onResume = (id, workerId) => this.hooks.resume?.(id, workerId) ?? false;
    this.#poller = new HealthPoller(this.#balancer, (id) => this.#cfg(id), {
      ready: (w, ms) => {
        o.logger.info(`worker ${w.id} ready (/ping 200 after ${ms} ms)`, { endpointId: w.endpointId, workerId: w.id });
        o.metrics.coldStart(w.endpointId, ms);
        this.hooks.ready?.(w.endpointId, w.id);
      },
      unhealthy: (w) => {
        o.logger.warn(`worker ${w.id} failed ${w.failures} health checks in a row: draining and replacing it`, {
          endpointId: w.endpointId,
          workerId: w.id,
        });
        this.hooks.unhealthy?.(w.endpointId, w.id);
      },
    });
  }

  has(endpointId: string): boolean {
    return this.#config.has(endpointId);
  }

  endpointIds(): string[] {
    return [...this.#config.keys()];
  }

  add(endpointId: string, workerId: string, at: LbAddress): void {
    this.#poller.watch(this.#balancer.add(endpointId, workerId, at, Date.now()));
  }

  drain(workerId: string): Promise<void> {
    return this.#balancer.drain(workerId);
  }

  setBroken(endpointId: string, why: string | undefined): void {
    this.#balancer.setBroken(endpointId, why);
  }

  restarted(workerId: string): void {
    const w = this.#balancer.get(workerId);
    if (!w) return;
    this.#balancer.undrain(workerId);
    w.failures = 0;
    this.#balancer.setState(w, 'starting');
    this.#poller.watch(w);
  }

  remove(workerId: string, scaledDown: boolean): void {
    this.#poller.unwatch(workerId);
    this.#balancer.remove(workerId, scaledDown);
  }

  connected(endpointId: string): { workerId: string; running: number; draining: boolean }[] {
    return this.#balancer
      .workers(endpointId)
      .filter((w) => w.state === 'ready' || w.inFlight > 0)
      .map((w) => ({ workerId: w.id, running: w.inFlight, draining: w.draining }));
  }

  counts(endpointId: string): { waiting: number; inFlight: number; waitedMs: number | undefined } {
    const { count, oldest } = this.#balancer.waiting(endpointId);
    const inFlight = this.#balancer.workers(endpointId).reduce((n, w) => n + w.inFlight, 0);
    return { waiting: count, inFlight, waitedMs: oldest === undefined ? undefined : this.#o.now() - oldest };
  }

  /** `GET /v2/<ep>/health` of a load-balancing endpoint: requests (waiting, in flight, served) and workers. */
  health(endpointId: string): HealthReply {
    const ws = this.#balancer.workers(endpointId);
    const c = this.counts(endpointId);
    const served = this.#o.metrics.served(endpointId);
    const ready = ws.filter((w) => w.state === 'ready' && !w.draining);
    return {
      jobs: { completed: served.ok, failed: served.failed, inProgress: c.inFlight, inQueue: c.waiting, retried: 0 },
      workers: {
        idle: ready.filter((w) => w.inFlight === 0).length,
        running: ready.filter((w) => w.inFlight > 0).length,
        ready: ready.length,
        initializing: ws.filter((w) => w.state === 'starting' || w.state === 'initializing').length,
        throttled: 0,
        unhealthy: ws.filter((w) => w.state === 'unhealthy').length,
      },
      ...(c.waiting > 0 ? { waitingFor: ws.length === 0 ? 'cold_start' : 'worker' } : {}),
    };
  }

  /** `ANY /v2/<ep>/lb/<rest>`: `rest` is the path the worker sees (with the query as received). */
  async serve(req: ApiRequest, endpointId: string, rest: string): Promise<ApiResponse> {
    const cfg = this.#cfg(endpointId);
    const affinity = parseAffinity(req.headers[WORKER_ID_HEADER]);
    const started = performance.now();
    const got = this.#balancer.acquire(
      endpointId,
      affinity,
      { coldStartMs: cfg.coldStartWaitMs, affinityMs: cfg.affinityWaitMs },
      this.#o.now,
      req.signal,
    );
    // A worker with room is taken at once; only a request that waits for one awaits.
    const w = got instanceof Promise ? await got : got;
    let released = false;
    const release = (status: number) => {
      if (released) return;
      released = true;
      this.#balancer.release(w);
      this.#o.metrics.request(endpointId, w.id, status, performance.now() - started);
    };
    const search = req.rawQuery ? `?${req.rawQuery}` : '';
    const { answer, abort } = forward(req, w, `${rest}${search}`, cfg.maxBodyBytes);
    let up: Awaited<typeof answer> | undefined;
    // Before the answer: settle it with the error; after: cut the relay (the client sees a short body).
    const stop = (err: BerthError) => (up ? up.req.destroy() : abort(err));
    const timer = setTimeout(
      () =>
        stop(
          new BerthError(
            'processing_timeout',
            `worker ${w.id} did not answer within ${cfg.requestTimeoutMs} ms (requestTimeoutMs)`,
            { workerId: w.id },
          ),
        ),
      cfg.requestTimeoutMs,
    );
    const onGone = () => stop(new BerthError('unavailable', 'client gone'));
    req.signal?.addEventListener('abort', onGone);
    try {
      up = await answer;
    } catch (err) {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onGone);
      if (err instanceof BerthError && err.code === 'worker_lost') this.#lost(w);
      release(err instanceof BerthError ? err.status : 500);
      throw err;
    }
    const u = up;
    const { headers, setCookie } = downstreamHeaders(u.res);
    headers[WORKER_ID_HEADER] = w.id;
    const status = u.res.statusCode ?? 502;
    const finish = () => {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onGone);
      if (!u.res.complete) u.req.destroy();
      release(status);
    };
    // A small answer is read whole and sent in one write with its headers (most JSON answers): one of known length,
    // or a chunked one that has already arrived whole (one packet), which then skips the relay and the separate
    // write of the headers that a stream needs.
    const length = Number(u.res.headers['content-length'] ?? -1);
    const whole =
      (length >= 0 && length <= WHOLE_ANSWER_BYTES) ||
      (u.res.complete && length < 0 && req.method !== 'HEAD' && u.res.readableLength <= WHOLE_ANSWER_BYTES);
    if (whole && !setCookie) {
      // Already received whole (usually, by the time its headers are read): taken in one read, no promise.
      if (u.res.complete) {
        const bytes = (u.res.read() as Buffer | null) ?? EMPTY;
        finish();
        return { status, headers, bytes };
      }
      try {
        const bytes = await readAll(u.res);
        return { status, headers, bytes };
      } finally {
        finish();
      }
    }
    return { status, headers, piped: relay(u.res, finish), ...(setCookie ? { setCookie } : {}) };
  }

  /** A connection to the worker failed: no more requests until its health says 200 again. */
  #lost(w: LbWorker): void {
    if (this.#balancer.get(w.id) !== w || w.state !== 'ready') return;
    w.failures++;
    this.#balancer.setState(w, 'unhealthy');
  }

  close(): void {
    this.#poller.close();
    this.#balancer.close();
  }

  #cfg(endpointId: string): ResolvedLbEndpoint {
    const c = this.#config.get(endpointId);
    if (!c) throw new BerthError('endpoint_not_found', `endpoint ${endpointId} is not a load-balancing endpoint`);
    return c;
  }
}

/** Answers up to this size (by their Content-Length) are read whole, then sent in one write. */
const WHOLE_ANSWER_BYTES = 64 * 1024;
const EMPTY = Buffer.alloc(0);

/** The whole body of a short answer; rejects when the worker's connection breaks first. */
function readAll(res: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    res.on('error', reject);
    res.on('aborted', () => reject(new BerthError('worker_lost', 'the worker closed the connection mid-answer')));
  });
}

/** The worker's answer, chunk by chunk as it comes (the reader's pace is the worker's: back-pressure). */
async function* relay(res: AsyncIterable<Uint8Array>, done: () => void): AsyncIterable<Uint8Array> {
  try {
    for await (const c of res) yield c;
  } finally {
    done();
  }
}
