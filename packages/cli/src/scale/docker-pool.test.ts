import { createLogger } from '@berth/protocol/log';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/index.js';
import { DockerError, type ContainerSpec, type ContainerSummary, type DockerApi } from './docker-api.js';
import type { WorkerControl } from '@berth/server';
import { ScaleLoop } from '@berth/server/scaling';
import { coldStartParts } from './cold-start.js';
import { DockerPool } from './docker-pool.js';
import { inspectFrom } from './fake-daemon.test-helpers.js';

/**
 * A daemon in memory whose containers exit as soon as they start (a worker that crashes at once), and whose
 * start call answers only when the test lets it: the listing shows the container exited while the call is pending.
 */
class CrashingDaemon {
  driver = 'overlay2';
  readonly containers = new Map<string, ContainerSummary>();
  readonly pendingStarts: (() => void)[] = [];
  #next = 0;

  api(): DockerApi {
    const api: Partial<DockerApi> = {
      describe: () => 'fake daemon',
      listContainers: async () => [...this.containers.values()],
      createContainer: async (name: string, spec: ContainerSpec) => {
        const id = `c${++this.#next}`;
        this.containers.set(id, {
          Id: id,
          Names: [`/${name}`],
          Image: spec.Image,
          State: 'created',
          Labels: spec.Labels,
          Created: 0,
        });
        return id;
      },
      startContainer: (id: string) => {
        this.containers.get(id)!.State = 'exited';
        return new Promise<void>((resolve) => this.pendingStarts.push(resolve));
      },
      removeContainer: async (id: string) => void this.containers.delete(id),
      exitOf: async () => ({ exitCode: 1, tail: 'boom' }),
      stopContainer: async () => {},
      storageDriver: async () => this.driver,
      inspectContainer: inspectFrom(this.containers),
    };
    return api as DockerApi;
  }
}

/** A daemon in memory whose containers start and keep running; it records when each create call came. */
class RunningDaemon {
  readonly containers = new Map<string, ContainerSummary>();
  readonly creates: number[] = [];

  api(): DockerApi {
    const api: Partial<DockerApi> = {
      describe: () => 'fake daemon',
      listContainers: async () => [...this.containers.values()],
      createContainer: async (name: string, spec: ContainerSpec) => {
        this.creates.push(performance.now());
        const id = `c${this.creates.length}`;
        const c = { Id: id, Names: [`/${name}`], Image: spec.Image, State: 'created', Labels: spec.Labels, Created: 0 };
        this.containers.set(id, c);
        return id;
      },
      startContainer: async (id: string) => void (this.containers.get(id)!.State = 'running'),
      storageDriver: async () => 'overlay2',
      removeContainer: async (id: string) => void this.containers.delete(id),
      stopContainer: async () => {},
      inspectContainer: inspectFrom(this.containers),
    };
    return api as DockerApi;
  }
}

/** The scale loop over a Docker pool of one endpoint (`maxWorkers` 1 or as given) on `docker`, its log lines into `lines`. */
function scaler(
  docker: DockerApi,
  lines: string[],
  o: {
    maxWorkers?: number;
    inQueue?: () => number;
    onHealth?: () => void;
    events?: string[];
    tickMs?: number;
    wakeMs?: number;
  } = {},
): ScaleLoop {
  const config = resolveConfig(
    { endpoints: { ep: { worker: './ep.ts', minWorkers: 0, maxWorkers: o.maxWorkers ?? 1 } } },
    '/p/berth.config.json',
  );
  const workers: WorkerControl = {
    connected: () => [],
    setExpected: () => {},
    setBroken: (id, broken) => void o.events?.push(`broken ${id} ${broken}`),
    stopping: () => {},
    setWaitReason: () => {},
    setGpus: () => {},
    setBatchLane: () => {},
    setLane: () => {},
    batchBacklog: async () => 0,
    coldStart: () => {},
    startFailed: (id, reason) => void o.events?.push(`start failed ${id} ${reason}`),
    on: () => () => {},
  };
  const logger = createLogger({ write: (line) => void lines.push(line) });
  const ep = config.endpoints[0]!;
  const pool = new DockerPool({
    workers,
    docker,
    endpoints: [{ ep, image: 'ep-image' }],
    name: 'test',
    url: 'http://127.0.0.1:1',
    tokens: { deployment: async () => 'd0d0d0d0', settle: async () => ({ token: 'berth_wk_x', revoked: 0 }) },
    logger,
  });
  const health = async () => {
    o.onHealth?.();
    return { jobs: { inQueue: o.inQueue?.() ?? 1, inProgress: 0 } } as never;
  };
  return new ScaleLoop({
    server: { workers, health },
    pool,
    endpoints: [ep],
    logger,
    ...(o.tickMs !== undefined ? { tickMs: o.tickMs } : {}),
    ...(o.wakeMs !== undefined ? { wakeMs: o.wakeMs } : {}),
  });
}

describe('ScaleLoop over the DockerPool', () => {
  it('a container that exits before its start call returns is one crash, not two', async () => {
    const daemon = new CrashingDaemon();
    const lines: string[] = [];
    const s = scaler(daemon.api(), lines);
    await s.tick(); // creates test-ep-1; its start call is pending
    await new Promise((r) => setTimeout(r, 10));
    expect(daemon.pendingStarts).toHaveLength(1);
    await s.tick(); // lists test-ep-1 as exited while the start call is still pending: left for later
    expect(daemon.containers.size).toBe(1);
    daemon.pendingStarts.shift()!();
    await new Promise((r) => setTimeout(r, 10));
    await s.tick(); // now the exit is handled: removed, one crash, backoff
    expect(daemon.containers.size).toBe(0);
    const crashes = lines.filter((l) => /next start in/.test(l));
    expect(crashes, lines.join('\n')).toHaveLength(1);
    expect(crashes[0]).toMatch(/next start in 0\.5 s \(crash 1 in a row\)/);
  });

  it('a job queued for an endpoint at zero starts a container at once, not at the next tick', async () => {
    const daemon = new RunningDaemon();
    let inQueue = 0;
    let healthCalls = 0;
    // The next tick is a minute away: only the wake can start the container.
    const s = scaler(daemon.api(), [], {
      maxWorkers: 2,
      inQueue: () => inQueue,
      onHealth: () => healthCalls++,
      tickMs: 60_000,
      wakeMs: 20,
    });
    s.start();
    try {
      await new Promise((r) => setTimeout(r, 100));
      expect(daemon.creates).toHaveLength(0);
      const queued = performance.now();
      inQueue = 1;
      const deadline = Date.now() + 2_000;
      while (daemon.creates.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      expect(daemon.creates).toHaveLength(1);
      expect(daemon.creates[0]! - queued).toBeLessThan(1_000);
      // With a container there, the wake looks no more: the endpoint's health is asked by ticks only.
      await new Promise((r) => setTimeout(r, 50));
      const calls = healthCalls;
      await new Promise((r) => setTimeout(r, 200));
      expect(healthCalls).toBe(calls);
      expect(daemon.creates).toHaveLength(1);
    } finally {
      await s.stop();
    }
  });

  it('splits a cold start into the scaler wait, the two docker calls, the boot, the assignment and the run', () => {
    const t = {
      name: 'w-1',
      id: 'c1',
      createdAt: 1_100,
      createdDoneAt: 1_140,
      startedAt: 1_300,
      connectedAt: 1_550,
      adopted: false,
      verified: true,
      connected: true,
      draining: false,
      starting: false,
      timed: false,
    };
    const job = { queuedAt: 1_000, startedAt: 1_552 } as Parameters<typeof coldStartParts>[1];
    expect(coldStartParts(t, job, 1_600)).toEqual({
      scaler: 100,
      create: 40,
      start: 160,
      boot: 250,
      assign: 2,
      run: 48,
    });
    // A job queued after the container was asked for (a burst's later jobs) has no scaler wait.
    expect(coldStartParts(t, { ...job, queuedAt: 1_200 }, 1_600)).not.toHaveProperty('scaler');
  });

  it('warns once that the vfs storage driver copies the image at every create', async () => {
    const daemon = new CrashingDaemon();
    daemon.driver = 'vfs';
    const lines: string[] = [];
    const s = scaler(daemon.api(), lines);
    await s.tick();
    await s.tick();
    await new Promise((r) => setTimeout(r, 10));
    expect(lines.filter((l) => /storage driver is vfs/.test(l))).toHaveLength(1);
    const quiet: string[] = [];
    await scaler(new CrashingDaemon().api(), quiet).tick();
    await new Promise((r) => setTimeout(r, 10));
    expect(quiet.join('\n')).not.toMatch(/storage driver/);
  });

  it('a start call that fails is one crash: no other container starts while the failed one is removed', async () => {
    const daemon = new RunningDaemon();
    const api = daemon.api();
    api.startContainer = async () => {
      throw new DockerError(500, 'OCI runtime create failed');
    };
    const removeContainer = api.removeContainer.bind(api);
    api.removeContainer = async (id: string) => {
      await removeContainer(id); // gone from the listing at once, the answer slow: the wake looks meanwhile
      await new Promise((r) => setTimeout(r, 150));
    };
    const lines: string[] = [];
    const s = scaler(api, lines, { tickMs: 60_000, wakeMs: 10 });
    s.start();
    try {
      await new Promise((r) => setTimeout(r, 400)); // the backoff after the first failure is 500 ms
      expect(daemon.creates).toHaveLength(1);
      expect(lines.filter((l) => /next start in/.test(l))).toHaveLength(1);
    } finally {
      await s.stop();
    }
  });

  it('a daemon that does not answer: one error line, one daemon_down failure, the endpoint broken; then it recovers', async () => {
    const daemon = new RunningDaemon();
    const api = daemon.api();
    const list = api.listContainers.bind(api);
    let down = true;
    api.listContainers = async (filters) => {
      if (down) throw new Error('connect ENOENT /var/run/docker.sock');
      return list(filters);
    };
    const lines: string[] = [];
    const events: string[] = [];
    const s = scaler(api, lines, { events });
    for (let i = 0; i < 3; i++) await s.tick();
    expect(
      lines.filter((l) => /does not answer \(connect ENOENT/.test(l)),
      lines.join('\n'),
    ).toHaveLength(1);
    expect(events).toEqual(['start failed ep daemon_down', 'broken ep true']);
    expect(daemon.creates).toHaveLength(0);
    down = false;
    await s.tick();
    expect(lines.filter((l) => /answers again/.test(l))).toHaveLength(1);
    expect(events.at(-1)).toBe('broken ep false');
    expect(daemon.creates).toHaveLength(1); // the queued job gets its container once the daemon is back
  });

  it("removes its containers of an endpoint no longer configured (running ones stopped first), not another control plane's", async () => {
    const daemon = new RunningDaemon();
    const api = daemon.api();
    const stopped: string[] = [];
    api.stopContainer = async (id: string) => void stopped.push(id);
    const stray = (id: string, state: string, labels: Record<string, string>) =>
      daemon.containers.set(id, { Id: id, Names: [`/${id}`], Image: 'old', State: state, Labels: labels, Created: 0 });
    stray('gone-1', 'running', { 'berth.control-plane': 'test', 'berth.endpoint': 'gone' });
    stray('gone-2', 'exited', { 'berth.control-plane': 'test', 'berth.endpoint': 'gone' });
    const list = api.listContainers.bind(api);
    api.listContainers = async (filters) => {
      expect(filters).toEqual(['berth.control-plane=test']); // the daemon filters by label: only ours are listed
      return list(filters);
    };
    const lines: string[] = [];
    const s = scaler(api, lines, { inQueue: () => 0 });
    await s.tick();
    // The removal runs after the tick (stop, then remove): wait for its promise chain, not for a time.
    for (let i = 0; i < 100 && daemon.containers.size > 0; i++) await new Promise((r) => setImmediate(r));
    expect(stopped).toEqual(['gone-1']);
    expect([...daemon.containers.keys()]).toEqual([]);
    expect(lines.filter((l) => /endpoint gone is no longer configured/.test(l))).toHaveLength(2);
  });
});
