import type { Logger } from '@berth/protocol';
import { decide, nextWorkerId, QueueWait, type BerthServer, type JobRecord } from '@berth/server';
import { DEFAULT_RESTART_POLICY } from '../internal/supervisor-types.js';
import { containerSpec, LABEL_CONTROL_PLANE, LABEL_ENDPOINT, type ScaledEndpoint } from './container-spec.js';
import { DockerError, type ContainerSummary, type DockerApi } from './docker-api.js';
import { deploySettings } from '../build/deploy.js';
import type { ScalingLease } from './scaling-lease.js';
import {
  backoffDelay,
  errorText,
  IMAGE_RETRY_MS,
  newEndpointState,
  type EndpointState,
  type Tracked,
} from './scaler-state.js';

export interface DockerScalerOptions {
  server: Pick<
    BerthServer,
    | 'connectedWorkers'
    | 'setExpectedWorkers'
    | 'setHandlerBroken'
    | 'health'
    | 'workerStopping'
    | 'workerColdStart'
    | 'workerStartFailed'
  >;
  docker: DockerApi;
  endpoints: readonly ScaledEndpoint[];
  /** The `berth.control-plane` label: every replica of one control plane uses the same name. */
  name: string;
  /** `BERTH_URL` of the workers: where they reach the control plane (a balancer in front of replicas). */
  url: string;
  lease: ScalingLease;
  logger: Logger;
  /** How often the scaler looks at the queue and the containers. Default 250 ms. */
  tickMs?: number;
  /**
   * How often an endpoint with no worker container is looked at for a queued job (its job counts only, no Docker
   * call): a job for an endpoint at zero starts a container at once, not at the next tick. 0: off (the tick only;
   * `berth serve` turns it off on PostgreSQL, where each look is a query). Default 50 ms.
   */
  wakeMs?: number;
  /** Clock (epoch ms). Default Date.now. */
  now?: () => number;
}

/**
 * `berth serve --scale docker`: keeps each endpoint's worker containers between `minWorkers` and `maxWorkers`
 * with the scaling policy of `berth dev` (`decide`), through the Docker Engine API. Scale-down drains (`docker
 * stop` with the stop timeout of `deploy.json`); crashes are restarted with berth dev's backoff; containers of
 * this control plane found at start are adopted, those of endpoints no longer configured removed. Only the holder
 * of the scaling lease acts.
 */
export class DockerScaler {
  readonly #o: DockerScalerOptions;
  readonly #state = new Map<string, EndpointState>();
  readonly #queueWait = new QueueWait();
  readonly #removing = new Set<string>();
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  #wakeTimer: NodeJS.Timeout | undefined;
  #ticking = false;
  #waking = false;
  #leader = false;
  #daemonDown: string | undefined;

  constructor(o: DockerScalerOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
    for (const s of o.endpoints) this.#state.set(s.ep.id, newEndpointState(s));
  }

  start(): void {
    this.#timer = setInterval(() => void this.tick(), this.#o.tickMs ?? 250);
    this.#timer.unref();
    const wakeMs = this.#o.wakeMs ?? 50;
    if (wakeMs > 0) {
      this.#wakeTimer = setInterval(() => void this.#wake(), wakeMs);
      this.#wakeTimer.unref();
    }
    void this.tick();
  }

  /** Between ticks: an endpoint at zero containers with a job queued gets its tick now (a cold start begins). */
  async #wake(): Promise<void> {
    if (!this.#leader || this.#ticking || this.#waking || this.#daemonDown !== undefined) return;
    this.#waking = true;
    try {
      const now = this.#now();
      for (const st of this.#state.values()) {
        if (now < st.notBefore || [...st.workers.values()].some((t) => !t.draining)) continue;
        if ((await this.#o.server.health(st.s.ep.id)).jobs.inQueue > 0) return void this.tick();
      }
    } catch {
      // The tick looks again and reports what fails.
    } finally {
      this.#waking = false;
    }
  }

  /** Stops scaling; containers keep running (the next start adopts them). */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    clearInterval(this.#wakeTimer);
    while (this.#ticking) await new Promise((r) => setTimeout(r, 10));
    await this.#o.lease.close();
  }

  /** A worker said hello to this control plane (`onWorkerConnected` of the server): the end of its boot. */
  onWorkerConnected(workerId: string, endpointId: string): void {
    const t = this.#state.get(endpointId)?.workers.get(workerId);
    if (t && t.connectedAt === undefined) t.connectedAt = this.#now();
  }

  /**
   * A job finished: the first one of a container started here times its cold start (the metric), and an info
   * line gives its parts: the job's wait for the scaler, the create and start calls, the boot inside the container
   * up to its hello, the assignment and the run.
   */
  onJobFinished(job: JobRecord): void {
    const t = job.workerId === undefined ? undefined : this.#state.get(job.endpointId)?.workers.get(job.workerId);
    if (!t || t.adopted || t.timed || job.startedAt === undefined) return;
    t.timed = true;
    const ep = job.endpointId;
    const finishedAt = job.finishedAt ?? this.#now();
    this.#o.server.workerColdStart(ep, 'first_job_assigned', job.startedAt - t.createdAt);
    this.#o.server.workerColdStart(ep, 'first_job_done', finishedAt - t.createdAt);
    const parts = coldStartParts(t, job, finishedAt);
    const text = Object.entries(parts)
      .map(([k, v]) => `${k} ${v} ms`)
      .join(', ');
    this.#o.logger.info(`cold start of ${t.name}: ${finishedAt - t.createdAt} ms (${text})`, {
      endpointId: ep,
      ...parts,
    });
  }

  /** One scaler pass (also run by the timer). */
  async tick(): Promise<void> {
    if (this.#ticking) return;
    this.#ticking = true;
    try {
      if (!(await this.#o.lease.held())) {
        if (this.#leader) this.#o.logger.warn('scaling lease lost: another replica scales the workers now');
        this.#leader = false;
        return;
      }
      let list: ContainerSummary[];
      try {
        list = await this.#o.docker.listContainers([`${LABEL_CONTROL_PLANE}=${this.#o.name}`]);
      } catch (err) {
        return this.#setDaemonDown(errorText(err));
      }
      if (!this.#leader) {
        this.#leader = true;
        this.#o.logger.info(`scaling worker containers with ${this.#o.docker.describe()}`, {
          controlPlane: this.#o.name,
          found: list.length,
        });
        void this.#checkStorageDriver();
      }
      this.#setDaemonDown(undefined);
      const now = this.#now();
      for (const c of list) if (!this.#state.has(c.Labels[LABEL_ENDPOINT] ?? '')) this.#removeStray(c);
      for (const st of this.#state.values())
        await this.#tickEndpoint(
          st,
          list.filter((c) => c.Labels[LABEL_ENDPOINT] === st.s.ep.id),
          now,
        );
    } catch (err) {
      this.#o.logger.error('scaler failed', { error: errorText(err) });
    } finally {
      this.#ticking = false;
    }
  }

  async #tickEndpoint(st: EndpointState, found: ContainerSummary[], now: number): Promise<void> {
    const { server } = this.#o;
    const ep = st.s.ep;
    const seen = new Set<string>();
    for (const c of found) {
      const name = (c.Names[0] ?? c.Id).replace(/^\//, '');
      seen.add(name);
      let t = st.workers.get(name);
      if (!t) {
        t = {
          name,
          id: c.Id,
          createdAt: c.Created * 1000,
          adopted: true,
          connected: false,
          draining: false,
          starting: false,
          timed: true,
        };
        st.workers.set(name, t);
        if (c.State === 'running') this.#o.logger.info(`adopted worker container ${name}`, { endpointId: ep.id });
      }
      // Not while its start call is pending: a container that exits at once is listed as exited before the call
      // returns, and handling it twice (here, and as a failed start) would count one crash twice.
      if ((c.State === 'exited' || c.State === 'dead') && !t.starting) await this.#exited(st, t, now);
    }
    for (const t of st.workers.values()) if (t.id !== '' && !t.starting && !seen.has(t.name)) st.workers.delete(t.name);

    const running = new Map<string, number>();
    for (const w of server.connectedWorkers(ep.id)) {
      const t = st.workers.get(w.workerId);
      if (!t) continue;
      running.set(w.workerId, w.running);
      if (!t.connected) {
        t.connected = true;
        t.connectedAt ??= now;
        st.crashesInARow = 0;
        this.#setProblem(st, undefined);
      }
      if (w.running > 0 || w.draining) st.idleSince.delete(w.workerId);
      else if (!st.idleSince.has(w.workerId)) st.idleSince.set(w.workerId, now);
    }
    const workers = [...st.workers.values()].filter((t) => !t.draining).sort((a, b) => a.createdAt - b.createdAt);
    const { jobs } = await server.health(ep.id);
    // A worker connected to another replica is not seen here: with no job anywhere it counts as idle since the
    // endpoint has had none (or since it was created), so replicas behind a balancer still scale to zero.
    if (jobs.inQueue + jobs.inProgress > 0) st.noJobsSince = undefined;
    else st.noJobsSince ??= now;
    for (const t of workers) {
      if (running.has(t.name) || t.id === '' || st.noJobsSince === undefined) continue;
      running.set(t.name, 0);
      if (!st.idleSince.has(t.name)) st.idleSince.set(t.name, Math.max(st.noJobsSince, t.createdAt));
    }
    for (const id of st.idleSince.keys()) if (!running.has(id)) st.idleSince.delete(id);
    const queuedForMs = this.#queueWait.observe(ep.id, jobs.inQueue, now);
    const d = decide(
      ep,
      {
        inQueue: jobs.inQueue,
        inProgress: jobs.inProgress,
        ...(queuedForMs !== undefined ? { queuedForMs } : {}),
        workers: workers.map((t) => t.name),
        running,
        idleSince: st.idleSince,
      },
      now,
    );
    if (d.start > 0 && now >= st.notBefore) {
      this.#o.logger.info(`scaling ${ep.id} up`, {
        from: workers.length,
        to: workers.length + d.start,
        inQueue: jobs.inQueue,
      });
      for (let i = 0; i < d.start; i++) this.#create(st, now);
    }
    const stopTimeout = deploySettings(ep).stopTimeoutSeconds;
    // A job may have been handed to a worker since the look above: only those still idle now are stopped.
    const stillIdle = new Set(
      server
        .connectedWorkers(ep.id)
        .filter((w) => w.running === 0)
        .map((w) => w.workerId),
    );
    for (const name of d.stop) {
      const t = st.workers.get(name)!;
      if (t.connected && !stillIdle.has(name)) continue;
      this.#o.logger.info(`scaling ${ep.id} down: ${name} idle`, { idleMs: now - (st.idleSince.get(name) ?? now) });
      t.draining = true;
      st.idleSince.delete(name);
      server.workerStopping(name);
      // SIGTERM: the worker drains (running jobs finish or are handed back), then exits; SIGKILL after the timeout.
      this.#o.docker.stopContainer(t.id, stopTimeout).catch((err: unknown) => {
        this.#o.logger.warn(`could not stop ${name}`, { error: errorText(err) });
      });
    }
    server.setExpectedWorkers(ep.id, [...st.workers.values()].filter((t) => !t.draining).length);
  }

  #create(st: EndpointState, now: number): void {
    const ep = st.s.ep;
    const name = nextWorkerId(`${this.#o.name}-${ep.id}`, [...st.workers.keys()]);
    const t: Tracked = {
      name,
      id: '',
      createdAt: now,
      adopted: false,
      connected: false,
      draining: false,
      starting: true,
      timed: false,
    };
    st.workers.set(name, t);
    const { docker } = this.#o;
    void (async () => {
      try {
        t.createdAt = this.#now();
        t.id = await docker.createContainer(name, containerSpec(st.s, name, this.#o.name, this.#o.url));
        t.createdDoneAt = this.#now();
        await docker.startContainer(t.id);
        t.startedAt = this.#now();
        t.starting = false;
      } catch (err) {
        // Still tracked (and starting) while it is removed: neither a tick nor the wake starts another meanwhile,
        // and its exit is not counted as a second crash.
        if (t.id) await docker.removeContainer(t.id).catch(() => {});
        t.starting = false;
        st.workers.delete(name);
        if (err instanceof DockerError && err.status === 404 && /image/i.test(err.message)) {
          st.notBefore = this.#now() + IMAGE_RETRY_MS;
          this.#o.server.workerStartFailed(ep.id, 'image_missing');
          return this.#setProblem(
            st,
            `endpoint ${ep.id}: image ${st.s.image} not found in the docker daemon (build it: berth build, then docker build -t ${st.s.image} <folder>); looking again in ${IMAGE_RETRY_MS / 1000} s`,
          );
        }
        if (err instanceof DockerError && err.status === 409) {
          // A container of that name is left from elsewhere: remove it, the next tick starts a new one.
          return void docker.removeContainer(name).catch(() => {});
        }
        this.#o.server.workerStartFailed(ep.id, 'create_failed');
        this.#backoff(st, `endpoint ${ep.id}: could not start a worker container: ${errorText(err)}`);
      }
    })();
  }

  /** A container stopped: removed; unless the scaler stopped it, a crash (backoff before the next start). */
  async #exited(st: EndpointState, t: Tracked, now: number): Promise<void> {
    if (this.#removing.has(t.id)) return;
    this.#removing.add(t.id);
    try {
      const { exitCode, tail } = await this.#o.docker.exitOf(t.id).catch(() => ({ exitCode: -1, tail: '' }));
      await this.#o.docker.removeContainer(t.id);
      st.workers.delete(t.name);
      if (t.draining) {
        this.#o.logger.info(`worker container ${t.name} stopped (exit ${exitCode})`, { endpointId: st.s.ep.id });
        return;
      }
      const upS = ((now - t.createdAt) / 1000).toFixed(1);
      const why = `endpoint ${st.s.ep.id}: worker container ${t.name} exited with code ${exitCode} ${t.connected ? 'after' : 'before connecting, after'} ${upS} s`;
      const output = tail ? `; its last output:\n${tail.replace(/^/gm, '    ')}` : '';
      if (t.connected && now - t.createdAt >= DEFAULT_RESTART_POLICY.minUptimeMs) {
        this.#o.logger.warn(`${why}; starting another${output}`);
      } else {
        this.#o.server.workerStartFailed(st.s.ep.id, 'exited_early');
        this.#backoff(st, `${why}${output}`);
      }
    } finally {
      this.#removing.delete(t.id);
    }
  }

  /** A crash in a row: the next start waits berth dev's backoff (500 ms doubling to 8 s; 60 s after 5 in a row). */
  #backoff(st: EndpointState, why: string): void {
    st.crashesInARow++;
    const delay = backoffDelay(st.crashesInARow);
    st.notBefore = this.#now() + delay;
    this.#o.logger.error(`${why}\n  next start in ${delay / 1000} s (crash ${st.crashesInARow} in a row)`);
    this.#setProblem(st, why);
  }

  #setProblem(st: EndpointState, why: string | undefined): void {
    const was = st.problem;
    st.problem = why;
    this.#o.server.setHandlerBroken(st.s.ep.id, why !== undefined || this.#daemonDown !== undefined);
    if (why !== undefined && why !== was && !why.includes('exited with code')) this.#o.logger.error(why);
  }

  #setDaemonDown(why: string | undefined): void {
    if (why !== undefined && this.#daemonDown === undefined) {
      for (const id of this.#state.keys()) this.#o.server.workerStartFailed(id, 'daemon_down');
      this.#o.logger.error(
        `docker daemon at ${this.#o.docker.describe()} does not answer (${why}): no worker container can start; trying again every tick`,
      );
    }
    if (why === undefined && this.#daemonDown !== undefined)
      this.#o.logger.info(`docker daemon at ${this.#o.docker.describe()} answers again`);
    const changed = (why === undefined) !== (this.#daemonDown === undefined);
    this.#daemonDown = why;
    if (changed) for (const st of this.#state.values()) this.#setProblem(st, st.problem);
  }

  /** `vfs` copies the whole image at every container create (seconds per cold start): said once, as a warning. */
  async #checkStorageDriver(): Promise<void> {
    let driver = '';
    try {
      driver = await this.#o.docker.storageDriver();
    } catch {
      // Not known: nothing to say.
    }
    if (driver === 'vfs')
      this.#o.logger.warn(
        `docker storage driver is vfs: every container create copies the whole image (about 7 s per cold start for a 240 MB image on the build machine, against 10 ms with overlay2); run dockerd with --storage-driver overlay2 (or fuse-overlayfs where the kernel has no overlay)`,
      );
  }

  /** A container of this control plane whose endpoint is no longer configured: drained and removed. */
  #removeStray(c: ContainerSummary): void {
    if (this.#removing.has(c.Id)) return;
    this.#removing.add(c.Id);
    const name = (c.Names[0] ?? c.Id).replace(/^\//, '');
    this.#o.logger.info(`removing ${name}: endpoint ${c.Labels[LABEL_ENDPOINT] ?? '?'} is no longer configured`);
    const { docker } = this.#o;
    void (c.State === 'running' ? docker.stopContainer(c.Id, 30) : Promise.resolve())
      .then(() => docker.removeContainer(c.Id))
      .catch((err: unknown) => this.#o.logger.warn(`could not remove ${name}`, { error: errorText(err) }))
      .finally(() => this.#removing.delete(c.Id));
  }
}

/**
 * The parts of a cold start (ms): `scaler` the job's wait before the create call (when it was queued first),
 * `create` and `start` the Docker calls, `boot` from the start call's return to the worker's hello (node, the
 * bundle, the WebSocket), `assign` from the hello to the job's start, `run` the job itself.
 */
export function coldStartParts(t: Tracked, job: JobRecord, finishedAt: number): Record<string, number> {
  const parts: Record<string, number> = {};
  if (job.queuedAt <= t.createdAt) parts['scaler'] = t.createdAt - job.queuedAt;
  const marks: [string, number | undefined][] = [
    ['create', t.createdDoneAt],
    ['start', t.startedAt],
    ['boot', t.connectedAt],
    ['assign', job.startedAt],
    ['run', finishedAt],
  ];
  let last = t.createdAt;
  for (const [k, at] of marks) {
    if (at === undefined) continue;
    parts[k] = Math.max(0, at - last);
    last = at;
  }
  return parts;
}
