import type { PoolWaitReason, PoolWorker, WorkerPool } from '@berth/server/scaling';
import { deploySettings } from '../build/deploy.js';
import { adopt, replaceStale } from './adoption.js';
import { reportColdStart } from './cold-start.js';
import { LABEL_CONTROL_PLANE, LABEL_ENDPOINT } from './container-spec.js';
import { createWorker, reapExited } from './container-start.js';
import { DockerError, type ContainerSummary } from './docker-api.js';
import { oursOnly, removeStray, settleTokens } from './ownership.js';
import type { DockerPoolOptions, PoolContext } from './pool-context.js';
import { PoolProblems } from './pool-problems.js';
import { errorText, newEndpointState, type EndpointState } from './scaler-state.js';

/** Whether a container name of the endpoint's is one of its batch lane's (`...-<endpoint>-batch-<n>`). */
function isLaneName(endpointId: string, name: string): boolean {
  return name.endsWith(`-${endpointId}-batch-${name.slice(name.lastIndexOf('-') + 1)}`) && /-\d+$/.test(name);
}

/**
 * `berth serve --scale docker`'s workers: one container each, through the Docker Engine API. A stop drains
 * (`docker stop` with the stop timeout of `deploy.json`); a crash is removed and the next start waits berth dev's
 * backoff; containers of this control plane found at start are adopted, those of endpoints no longer configured
 * removed. The scale loop (`ScaleLoop`) decides; this pool lists, starts and stops. Its parts: a container's
 * start and exit (`container-start.ts`), whose containers and tokens it takes (`ownership.ts`, `adoption.ts`),
 * why no worker can start (`pool-problems.ts`).
 */
export class DockerPool implements WorkerPool {
  /** A look lists the daemon's containers (a call): every 250 ms, and a cold start begins between looks. */
  readonly cost = { tickMs: 250, wakeMs: 50 };
  /** Containers reach the control plane through a balancer: they may be connected to another replica. */
  readonly sharedByReplicas = true;
  readonly #o: DockerPoolOptions;
  readonly #state = new Map<string, EndpointState>();
  readonly #ctx: PoolContext;
  readonly #unsubscribe: (() => void)[];
  readonly #othersWarned = { said: false };

  constructor(o: DockerPoolOptions) {
    this.#o = o;
    const now = o.now ?? Date.now;
    for (const s of o.endpoints) this.#state.set(s.ep.id, newEndpointState(s));
    this.#ctx = {
      o,
      // The deployment is read from the store by each new holder of the scaling lease (`refresh`).
      owner: { controlPlane: o.name, deployment: '' },
      now,
      removing: new Set(),
      details: new Map(),
      problems: new PoolProblems({ workers: o.workers, docker: o.docker, logger: o.logger, now }, this.#state),
    };
    this.#unsubscribe = [
      o.workers.on('connected', (workerId, endpointId) => this.#connected(workerId, endpointId)),
      o.workers.on('jobFinished', (job) => {
        const t = job.workerId === undefined ? undefined : this.#state.get(job.endpointId)?.workers.get(job.workerId);
        if (t) reportColdStart(t, job, o.workers, o.logger, now());
      }),
    ];
  }

  /** Stops listening to the control plane (the containers keep running: the next start adopts them). */
  close(): void {
    for (const off of this.#unsubscribe) off();
  }

  async refresh(now: number, leading: boolean): Promise<boolean> {
    this.#refreshed = await this.#refresh(now, leading);
    return this.#refreshed;
  }

  async #refresh(now: number, leading: boolean): Promise<boolean> {
    const ctx = this.#ctx;
    if (leading) {
      try {
        ctx.owner.deployment = await this.#o.tokens.deployment();
      } catch (err) {
        this.#o.logger.error('could not read the deployment id from the key store', { error: errorText(err) });
        return false;
      }
    }
    let list: ContainerSummary[];
    try {
      list = await this.#o.docker.listContainers([`${LABEL_CONTROL_PLANE}=${this.#o.name}`]);
      list = oursOnly(ctx, list, this.#othersWarned);
      // Containers not started by this process: what they were created with (their token, URL and image).
      const known = new Set([...this.#state.values()].flatMap((st) => [...st.workers.values()].map((t) => t.id)));
      for (const c of list) {
        if (known.has(c.Id) || ctx.details.has(c.Id)) continue;
        // Gone since the listing (removed meanwhile): the next listing says so.
        const d = await this.#o.docker.inspectContainer(c.Id).catch((err: unknown) => {
          if (err instanceof DockerError && err.status === 404) return undefined;
          throw err;
        });
        if (d) ctx.details.set(c.Id, d);
      }
    } catch (err) {
      ctx.problems.setDaemonDown(errorText(err));
      return false;
    }
    if (leading) {
      this.#o.logger.info(`scaling worker containers with ${this.#o.docker.describe()}`, {
        controlPlane: this.#o.name,
        found: list.length,
        deployment: ctx.owner.deployment,
      });
      void ctx.problems.checkStorageDriver();
      if (!(await settleTokens(ctx, this.#state.values(), list))) return false;
    }
    ctx.problems.setDaemonDown(undefined);
    for (const c of list) if (!this.#state.has(c.Labels[LABEL_ENDPOINT] ?? '')) removeStray(ctx, c);
    for (const st of this.#state.values()) {
      await this.#reconcile(
        st,
        list.filter((c) => c.Labels[LABEL_ENDPOINT] === st.s.ep.id),
        now,
      );
      for (const name of st.workers.keys()) if (isLaneName(st.s.ep.id, name)) this.#o.workers.setLane(name, 'batch');
    }
    return true;
  }

  list(endpointId: string): PoolWorker[] {
    return this.#list(endpointId, false);
  }

  /**
   * The endpoints' batch lanes (issue #38) as a pool of their own, for a second scale loop under the same lease:
   * containers `<...>-<endpoint>-batch-<n>` with `BERTH_LANE=batch`, registered as lane workers with the server
   * (`workers.setLane`) when created and, adopted, at each look. Its looks are this pool's (the first loop's).
   */
  readonly batchLane: WorkerPool = {
    cost: this.cost,
    sharedByReplicas: true,
    refresh: async () => this.#refreshed,
    list: (endpointId) => this.#list(endpointId, true),
    canStart: (endpointId, now) => this.canStart(endpointId, now),
    start: (endpointId) => {
      const st = this.#state.get(endpointId);
      if (st) createWorker(this.#ctx, st, this.#ctx.now(), 'batch');
    },
    stop: (endpointId, workerId) => this.stop(endpointId, workerId),
  };
  #refreshed = false;

  #list(endpointId: string, lane: boolean): PoolWorker[] {
    const st = this.#state.get(endpointId);
    if (!st) return [];
    return [...st.workers.values()]
      .filter((t) => !t.draining && t.verified && isLaneName(endpointId, t.name) === lane)
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((t) => ({ id: t.name, startedAt: t.createdAt, pending: t.id === '' }));
  }

  canStart(endpointId: string, now: number): boolean {
    const st = this.#state.get(endpointId);
    return st?.token !== undefined && !this.#ctx.problems.daemonDown && now >= st.notBefore;
  }

  start(endpointId: string): void {
    const st = this.#state.get(endpointId);
    if (st) createWorker(this.#ctx, st, this.#ctx.now());
  }

  /**
   * `strict-resume` of a load-balancing worker this pool stopped while idle: a new container under its name (its
   * old one is removed by then), within `maxWorkers`. False: it cannot start now (the request answers as gone).
   */
  startAs(endpointId: string, name: string): boolean {
    const st = this.#state.get(endpointId);
    if (!st || st.workers.has(name) || !this.canStart(endpointId, this.#ctx.now())) return false;
    if (this.#list(endpointId, false).length >= st.s.ep.maxWorkers) return false;
    createWorker(this.#ctx, st, this.#ctx.now(), undefined, name);
    return st.workers.has(name);
  }

  stop(endpointId: string, workerId: string): void {
    const t = this.#state.get(endpointId)?.workers.get(workerId);
    if (!t || t.draining) return;
    t.draining = true;
    this.#o.workers.stopping(workerId);
    // SIGTERM: the worker drains (running jobs finish or are handed back), then exits; SIGKILL after the timeout.
    const stopTimeout = deploySettings(this.#state.get(endpointId)!.s.ep).stopTimeoutSeconds;
    // An HTTP worker gets no new request and finishes those in flight first (the proxy's drain).
    const http = this.#o.http?.has(endpointId) ? this.#o.http : undefined;
    void (http ? http.drain(workerId) : Promise.resolve())
      .then(() => this.#o.docker.stopContainer(t.id, stopTimeout))
      .catch((err: unknown) => {
        this.#o.logger.warn(`could not stop ${workerId}`, { error: errorText(err) });
      });
  }

  /**
   * Why the endpoint's queued jobs wait, as this pool sees it: its image missing, its containers exiting at start
   * again and again, else a container of it starting (created by this process, not yet connected here, for at
   * most the adoption timeout: one connected to another replica is not starting forever).
   */
  waitReason(endpointId: string): PoolWaitReason | undefined {
    const st = this.#state.get(endpointId);
    if (!st) return undefined;
    if (st.reason) return st.reason;
    const now = this.#ctx.now();
    const within = this.#o.adoptTimeoutMs ?? 60_000;
    for (const t of st.workers.values())
      if (!t.adopted && !t.connected && !t.draining && now - t.createdAt < within) return 'cold_start';
    return undefined;
  }

  /** The containers listed for one endpoint: new ones adopted, exited ones reaped, vanished ones forgotten. */
  async #reconcile(st: EndpointState, found: ContainerSummary[], now: number): Promise<void> {
    const seen = new Set<string>();
    for (const c of found) {
      const name = (c.Names[0] ?? c.Id).replace(/^\//, '');
      seen.add(name);
      const t = st.workers.get(name) ?? adopt(this.#ctx, st, c, name, now);
      // Not while its start call is pending: a container that exits at once is listed as exited before the call
      // returns, and handling it twice (here, and as a failed start) would count one crash twice.
      if ((c.State === 'exited' || c.State === 'dead') && !t.starting) await reapExited(this.#ctx, st, t, now);
      else if (!t.verified && !t.draining && now - (t.adoptedAt ?? now) >= (this.#o.adoptTimeoutMs ?? 60_000))
        replaceStale(this.#ctx, st, t);
    }
    for (const t of st.workers.values())
      if (t.id !== '' && !t.starting && !seen.has(t.name)) {
        st.workers.delete(t.name);
        this.#o.gpus?.release(t.name);
        this.#o.http?.removed(t.name, t.draining);
      }
    for (const w of this.#o.workers.connected(st.s.ep.id)) this.#connected(w.workerId, st.s.ep.id, now);
  }

  /** A worker said hello to this control plane: the end of its boot, and the end of its endpoint's crash run. */
  #connected(workerId: string, endpointId: string, now = this.#ctx.now()): void {
    const st = this.#state.get(endpointId);
    const t = st?.workers.get(workerId);
    if (!st || !t || t.connected) return;
    t.connected = true;
    if (!t.verified) {
      t.verified = true;
      this.#o.logger.info(`adopted worker container ${t.name} connected: counted`, { endpointId });
    }
    t.connectedAt ??= now;
    st.crashesInARow = 0;
    this.#ctx.problems.set(st, undefined);
  }
}
