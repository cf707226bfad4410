import type { Logger } from '@berth/protocol/log';
import type { WorkerControl } from '@berth/server';
import type { DockerApi } from './docker-api.js';
import { backoffDelay, type EndpointState } from './scaler-state.js';

/**
 * Why no worker of an endpoint can start, as the Docker pool tells the control plane (`setBroken`: one unhealthy
 * worker in /health) and the log: a missing image, crashes in a row (with their backoff), a daemon that does not
 * answer.
 */
export class PoolProblems {
  readonly #o: { workers: WorkerControl; docker: DockerApi; logger: Logger; now: () => number };
  readonly #states: ReadonlyMap<string, EndpointState>;
  #daemonDown: string | undefined;

  constructor(
    o: { workers: WorkerControl; docker: DockerApi; logger: Logger; now: () => number },
    states: ReadonlyMap<string, EndpointState>,
  ) {
    this.#o = o;
    this.#states = states;
  }

  /** Whether the daemon did not answer the last look. */
  get daemonDown(): boolean {
    return this.#daemonDown !== undefined;
  }

  /**
   * A crash in a row: the next start waits berth dev's backoff (500 ms doubling to 8 s; 60 s after 5 in a row).
   * `exited`: a container that exited at start (not a failed call); from the second in a row, a crash loop.
   */
  backoff(st: EndpointState, why: string, exited = false): void {
    st.crashesInARow++;
    const delay = backoffDelay(st.crashesInARow);
    st.notBefore = this.#o.now() + delay;
    this.#o.logger.error(`${why}\n  next start in ${delay / 1000} s (crash ${st.crashesInARow} in a row)`);
    this.set(st, why, exited && st.crashesInARow >= 2 ? 'crash_loop' : undefined);
  }

  /** Why no worker of the endpoint can start (undefined: it can), and that as a queued job's `waitingFor`. */
  set(st: EndpointState, why: string | undefined, reason?: EndpointState['reason']): void {
    const was = st.problem;
    st.problem = why;
    st.reason = why === undefined ? undefined : reason;
    this.#o.workers.setBroken(st.s.ep.id, why !== undefined || this.#daemonDown !== undefined);
    if (why !== undefined && why !== was && !why.includes('exited with code')) this.#o.logger.error(why);
  }

  setDaemonDown(why: string | undefined): void {
    const { docker, logger, workers } = this.#o;
    if (why !== undefined && this.#daemonDown === undefined) {
      for (const id of this.#states.keys()) workers.startFailed(id, 'daemon_down');
      logger.error(
        `docker daemon at ${docker.describe()} does not answer (${why}): no worker container can start; trying again every tick`,
      );
    }
    if (why === undefined && this.#daemonDown !== undefined)
      logger.info(`docker daemon at ${docker.describe()} answers again`);
    const changed = (why === undefined) !== (this.#daemonDown === undefined);
    this.#daemonDown = why;
    if (changed) for (const st of this.#states.values()) this.set(st, st.problem, st.reason);
  }

  /** `vfs` copies the whole image at every container create (seconds per cold start): said once, as a warning. */
  async checkStorageDriver(): Promise<void> {
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
}
