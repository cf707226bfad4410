import type { Logger } from '@berth/protocol/log';
import type { WorkerControl } from '@berth/server';
import { nextWorkerId, type PoolWorker, type WorkerPool } from '@berth/server/scaling';
import { DEFAULT_RESTART_POLICY } from '../internal/supervisor-types.js';
import {
  containerSpec,
  LABEL_CONTROL_PLANE,
  LABEL_DEPLOYMENT,
  LABEL_ENDPOINT,
  type Owner,
  type ScaledEndpoint,
} from './container-spec.js';
import { DockerError, type ContainerDetails, type ContainerSummary, type DockerApi } from './docker-api.js';
import { deploySettings } from '../build/deploy.js';
import { reportColdStart } from './cold-start.js';
import { configDifference } from './adoption.js';
import {
  backoffDelay,
  errorText,
  IMAGE_RETRY_MS,
  newEndpointState,
  type EndpointState,
  type Tracked,
} from './scaler-state.js';

export interface DockerPoolOptions {
  /** The control plane's `server.workers`: connections, cold starts, start failures, broken endpoints. */
  workers: WorkerControl;
  docker: DockerApi;
  endpoints: readonly ScaledEndpoint[];
  /** The `berth.control-plane` label: every replica of one control plane uses the same name. */
  name: string;
  /** `BERTH_URL` of the workers: where they reach the control plane (a balancer in front of replicas). */
  url: string;
  /**
   * This deployment's id (labels and worker ids) and the endpoints' worker tokens: settled by the lease holder
   * from the tokens its containers carry (`WorkerTokens`).
   */
  tokens: {
    deployment(): Promise<string>;
    settle(endpointId: string, inUse: readonly string[]): Promise<{ token: string; revoked: number }>;
  };
  logger: Logger;
  /**
   * How long an adopted container whose config differs from this start (URL, image, token) has to connect
   * before it is stopped and removed; until it connects it is not counted. Default 60 s.
   */
  adoptTimeoutMs?: number;
  /** Clock (epoch ms). Default Date.now. */
  now?: () => number;
}

/**
 * `berth serve --scale docker`'s workers: one container each, through the Docker Engine API. A stop drains
 * (`docker stop` with the stop timeout of `deploy.json`); a crash is removed and the next start waits berth dev's
 * backoff; containers of this control plane found at start are adopted, those of endpoints no longer configured
 * removed. The scale loop (`ScaleLoop`) decides; this pool lists, starts and stops.
 */
export class DockerPool implements WorkerPool {
  /** A look lists the daemon's containers (a call): every 250 ms, and a cold start begins between looks. */
  readonly cost = { tickMs: 250, wakeMs: 50 };
  /** Containers reach the control plane through a balancer: they may be connected to another replica. */
  readonly sharedByReplicas = true;
  readonly #o: DockerPoolOptions;
  readonly #state = new Map<string, EndpointState>();
  readonly #removing = new Set<string>();
  readonly #now: () => number;
  readonly #unsubscribe: (() => void)[];
  readonly #owner: Owner;
  /** Containers inspected at adoption (by id): what they were created with. */
  readonly #details = new Map<string, ContainerDetails>();
  #daemonDown: string | undefined;
  #othersSaid = false;

  constructor(o: DockerPoolOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
    // The deployment is read from the store by each new holder of the scaling lease (`refresh`).
    this.#owner = { controlPlane: o.name, deployment: '' };
    for (const s of o.endpoints) this.#state.set(s.ep.id, newEndpointState(s));
    this.#unsubscribe = [
      o.workers.on('connected', (workerId, endpointId) => this.#connected(workerId, endpointId)),
      o.workers.on('jobFinished', (job) => {
        const t = job.workerId === undefined ? undefined : this.#state.get(job.endpointId)?.workers.get(job.workerId);
        if (t) reportColdStart(t, job, o.workers, o.logger, this.#now());
      }),
    ];
  }

  /** Stops listening to the control plane (the containers keep running: the next start adopts them). */
  close(): void {
    for (const off of this.#unsubscribe) off();
  }

  async refresh(now: number, leading: boolean): Promise<boolean> {
    if (leading) {
      try {
        this.#owner.deployment = await this.#o.tokens.deployment();
      } catch (err) {
        this.#o.logger.error('could not read the deployment id from the key store', { error: errorText(err) });
        return false;
      }
    }
    let list: ContainerSummary[];
    try {
      list = await this.#o.docker.listContainers([`${LABEL_CONTROL_PLANE}=${this.#o.name}`]);
      list = this.#ours(list);
      // Containers not started by this process: what they were created with (their token, URL and image).
      const known = new Set([...this.#state.values()].flatMap((st) => [...st.workers.values()].map((t) => t.id)));
      for (const c of list) {
        if (known.has(c.Id) || this.#details.has(c.Id)) continue;
        // Gone since the listing (removed meanwhile): the next listing says so.
        const d = await this.#o.docker.inspectContainer(c.Id).catch((err: unknown) => {
          if (err instanceof DockerError && err.status === 404) return undefined;
          throw err;
        });
        if (d) this.#details.set(c.Id, d);
      }
    } catch (err) {
      this.#setDaemonDown(errorText(err));
      return false;
    }
    if (leading) {
      this.#o.logger.info(`scaling worker containers with ${this.#o.docker.describe()}`, {
        controlPlane: this.#o.name,
        found: list.length,
        deployment: this.#owner.deployment,
      });
      void this.#checkStorageDriver();
      if (!(await this.#settleTokens(list))) return false;
    }
    this.#setDaemonDown(undefined);
    for (const c of list) if (!this.#state.has(c.Labels[LABEL_ENDPOINT] ?? '')) this.#removeStray(c);
    for (const st of this.#state.values())
      await this.#reconcile(
        st,
        list.filter((c) => c.Labels[LABEL_ENDPOINT] === st.s.ep.id),
        now,
      );
    return true;
  }

  list(endpointId: string): PoolWorker[] {
    const st = this.#state.get(endpointId);
    if (!st) return [];
    return [...st.workers.values()]
      .filter((t) => !t.draining && t.verified)
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((t) => ({ id: t.name, startedAt: t.createdAt, pending: t.id === '' }));
  }

  canStart(endpointId: string, now: number): boolean {
    const st = this.#state.get(endpointId);
    return st?.token !== undefined && this.#daemonDown === undefined && now >= st.notBefore;
  }

  start(endpointId: string): void {
    const st = this.#state.get(endpointId);
    if (st) this.#create(st, this.#now());
  }

  stop(endpointId: string, workerId: string): void {
    const t = this.#state.get(endpointId)?.workers.get(workerId);
    if (!t) return;
    t.draining = true;
    this.#o.workers.stopping(workerId);
    // SIGTERM: the worker drains (running jobs finish or are handed back), then exits; SIGKILL after the timeout.
    const stopTimeout = deploySettings(this.#state.get(endpointId)!.s.ep).stopTimeoutSeconds;
    this.#o.docker.stopContainer(t.id, stopTimeout).catch((err: unknown) => {
      this.#o.logger.warn(`could not stop ${workerId}`, { error: errorText(err) });
    });
  }

  /** The containers listed for one endpoint: new ones adopted, exited ones reaped, vanished ones forgotten. */
  async #reconcile(st: EndpointState, found: ContainerSummary[], now: number): Promise<void> {
    const ep = st.s.ep;
    const seen = new Set<string>();
    for (const c of found) {
      const name = (c.Names[0] ?? c.Id).replace(/^\//, '');
      seen.add(name);
      let t = st.workers.get(name);
      if (!t) {
        // Counted at once only when it was started as this start would (URL, image, token); else once it connects.
        const differs = configDifference(this.#details.get(c.Id), {
          url: this.#o.url,
          image: st.s.image,
          token: st.token,
        });
        t = {
          name,
          id: c.Id,
          createdAt: c.Created * 1000,
          adopted: true,
          verified: differs === undefined,
          ...(differs !== undefined ? { differs, adoptedAt: now } : {}),
          connected: false,
          draining: false,
          starting: false,
          timed: true,
        };
        st.workers.set(name, t);
        if (c.State === 'running')
          this.#o.logger.info(
            `adopted worker container ${name}${differs ? `: not counted until it connects (${differs})` : ''}`,
            { endpointId: ep.id },
          );
      }
      // Not while its start call is pending: a container that exits at once is listed as exited before the call
      // returns, and handling it twice (here, and as a failed start) would count one crash twice.
      if ((c.State === 'exited' || c.State === 'dead') && !t.starting) await this.#exited(st, t, now);
      else if (!t.verified && !t.draining && now - (t.adoptedAt ?? now) >= (this.#o.adoptTimeoutMs ?? 60_000))
        this.#replaceStale(st, t);
    }
    for (const t of st.workers.values()) if (t.id !== '' && !t.starting && !seen.has(t.name)) st.workers.delete(t.name);
    for (const w of this.#o.workers.connected(ep.id)) this.#connected(w.workerId, ep.id, now);
  }

  /** A worker said hello to this control plane: the end of its boot, and the end of its endpoint's crash run. */
  #connected(workerId: string, endpointId: string, now = this.#now()): void {
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
    this.#setProblem(st, undefined);
  }

  #create(st: EndpointState, now: number): void {
    const ep = st.s.ep;
    const name = nextWorkerId(`${this.#o.name}-${this.#owner.deployment}-${ep.id}`, [
      ...st.workers.keys(),
      ...st.foreign,
    ]);
    const t: Tracked = {
      name,
      id: '',
      createdAt: now,
      adopted: false,
      verified: true,
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
        t.id = await docker.createContainer(name, containerSpec(st.s, name, this.#owner, this.#o.url, st.token!));
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
          this.#o.workers.startFailed(ep.id, 'image_missing');
          return this.#setProblem(
            st,
            `endpoint ${ep.id}: image ${st.s.image} not found in the docker daemon (build it: berth build, then docker build -t ${st.s.image} <folder>); looking again in ${IMAGE_RETRY_MS / 1000} s`,
          );
        }
        if (err instanceof DockerError && err.status === 409) return void this.#nameTaken(st, name);
        this.#o.workers.startFailed(ep.id, 'create_failed');
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
      this.#details.delete(t.id);
      if (!t.verified) {
        // A container of an earlier start that never connected here: not a crash of this start's workers.
        this.#o.logger.info(`removed adopted worker container ${t.name} (exit ${exitCode}; ${t.differs})`, {
          endpointId: st.s.ep.id,
        });
        return;
      }
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
        this.#o.workers.startFailed(st.s.ep.id, 'exited_early');
        this.#backoff(st, `${why}${output}`);
      }
    } finally {
      this.#removing.delete(t.id);
    }
  }

  /** Only this deployment's containers (and those of starts before deployments had ids): others are left alone. */
  #ours(list: ContainerSummary[]): ContainerSummary[] {
    const ours = list.filter((c) => (c.Labels[LABEL_DEPLOYMENT] ?? this.#owner.deployment) === this.#owner.deployment);
    if (ours.length < list.length && !this.#othersSaid) {
      this.#othersSaid = true;
      this.#o.logger.warn(
        `${list.length - ours.length} container(s) labelled ${LABEL_CONTROL_PLANE}=${this.#o.name} belong to another deployment (another data folder or database): left alone; give each deployment its own --scale-name`,
      );
    }
    return ours;
  }

  /** The lease holder's first look: each endpoint's token, reused from its containers when still valid. */
  async #settleTokens(list: ContainerSummary[]): Promise<boolean> {
    try {
      for (const st of this.#state.values()) {
        const inUse = list
          .filter((c) => c.Labels[LABEL_ENDPOINT] === st.s.ep.id && c.State === 'running')
          .map((c) => this.#details.get(c.Id)?.env['BERTH_WORKER_TOKEN'])
          .filter((x): x is string => x !== undefined);
        const { token, revoked } = await this.#o.tokens.settle(st.s.ep.id, inUse);
        st.token = token;
        if (revoked > 0)
          this.#o.logger.info(`endpoint ${st.s.ep.id}: revoked ${revoked} worker token(s) no container uses`);
      }
      return true;
    } catch (err) {
      this.#o.logger.error('could not settle the worker tokens', { error: errorText(err) });
      return false;
    }
  }

  /** An adopted container that differs from this start and did not connect in time: stopped, then removed. */
  #replaceStale(st: EndpointState, t: Tracked): void {
    t.draining = true;
    const s = Math.round((this.#o.adoptTimeoutMs ?? 60_000) / 1000);
    this.#o.logger.warn(
      `stopping adopted worker container ${t.name}: it did not connect within ${s} s and was started with another config (${t.differs}); a new one starts in its place`,
      { endpointId: st.s.ep.id },
    );
    this.#o.docker.stopContainer(t.id, 10).catch((err: unknown) => {
      this.#o.logger.warn(`could not stop ${t.name}`, { error: errorText(err) });
    });
  }

  /** A create met a container of that name: removed only when it carries this deployment's labels. */
  async #nameTaken(st: EndpointState, name: string): Promise<void> {
    const d = await this.#o.docker.inspectContainer(name).catch(() => undefined);
    if (
      d &&
      d.labels[LABEL_CONTROL_PLANE] === this.#o.name &&
      d.labels[LABEL_DEPLOYMENT] === this.#owner.deployment &&
      d.labels[LABEL_ENDPOINT] === st.s.ep.id
    ) {
      // Ours, created since the last listing: the next look adopts it.
      return;
    }
    st.foreign.add(name);
    this.#o.logger.warn(
      `a container named ${name} exists without this deployment's labels: left alone; the next worker of ${st.s.ep.id} takes another name`,
    );
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
    this.#o.workers.setBroken(st.s.ep.id, why !== undefined || this.#daemonDown !== undefined);
    if (why !== undefined && why !== was && !why.includes('exited with code')) this.#o.logger.error(why);
  }

  #setDaemonDown(why: string | undefined): void {
    if (why !== undefined && this.#daemonDown === undefined) {
      for (const id of this.#state.keys()) this.#o.workers.startFailed(id, 'daemon_down');
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
