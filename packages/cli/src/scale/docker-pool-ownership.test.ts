import { createLogger } from '@berth/protocol/log';
import { createApiKey, type WorkerControl } from '@berth/server';
import { MemoryKeyStore } from '@berth/server/memory';
import { ScaleLoop } from '@berth/server/scaling';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/index.js';
import { DockerPool } from './docker-pool.js';
import { FakeDaemon } from './fake-daemon.test-helpers.js';
import { WorkerTokens } from './worker-tokens.js';

// Issue #36 items 9, 10 and 12: whose containers and tokens a `berth serve --scale docker` start may take over.

const URL = 'http://127.0.0.1:8080';
const ep = resolveConfig(
  { endpoints: { ep: { worker: './ep.ts', minWorkers: 0, maxWorkers: 2 } } },
  '/p/berth.config.json',
).endpoints[0]!;

/** One `berth serve --scale docker` start on `daemon` and `keys`: its loop, pool, clock, log and workers. */
async function start(daemon: FakeDaemon, keys: MemoryKeyStore, o: { inQueue?: number; url?: string } = {}) {
  const tokens = new WorkerTokens(keys, 'test');
  const lines: string[] = [];
  const connected: { workerId: string; running: number; draining: boolean }[] = [];
  const onConnected: ((workerId: string, endpointId: string) => void)[] = [];
  const workers: WorkerControl = {
    connected: () => connected,
    setExpected: () => {},
    setBroken: () => {},
    stopping: () => {},
    setWaitReason: () => {},
    setGpus: () => {},
    setBatchLane: () => {},
    setLane: () => {},
    batchBacklog: async () => 0,
    coldStart: () => {},
    startFailed: () => {},
    on: ((event: string, fn: (workerId: string, endpointId: string) => void) => {
      if (event === 'connected') onConnected.push(fn);
      return () => {};
    }) as WorkerControl['on'],
  };
  const logger = createLogger({ write: (l) => void lines.push(l) });
  let now = 1_000_000;
  let inQueue = o.inQueue ?? 1;
  const pool = new DockerPool({
    workers,
    docker: daemon.api(),
    endpoints: [{ ep, image: 'ep-image' }],
    name: 'test',
    url: o.url ?? URL,
    tokens,
    logger,
    adoptTimeoutMs: 30_000,
    now: () => now,
  });
  const loop = new ScaleLoop({
    server: { workers, health: async () => ({ jobs: { inQueue, inProgress: 0 } }) as never },
    pool,
    endpoints: [ep],
    logger,
    now: () => now,
  });
  /** One look, and the create/start calls it began. */
  const tick = async () => {
    await loop.tick();
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  };
  return {
    deployment: await tokens.deployment(),
    lines,
    tick,
    advance: (ms: number) => void (now += ms),
    setQueue: (n: number) => void (inQueue = n),
    connect: (workerId: string) => {
      connected.push({ workerId, running: 0, draining: false });
      for (const fn of onConnected) fn(workerId, 'ep');
    },
    stop: async () => {
      await loop.stop();
      pool.close();
    },
  };
}

const liveTokens = async (keys: MemoryKeyStore) =>
  (await keys.list()).filter((k) => k.kind === 'worker' && k.revokedAt === null);
const tokenOf = (daemon: FakeDaemon, name: string) =>
  daemon
    .byName(name)
    ?.Env?.find((e) => e.startsWith('BERTH_WORKER_TOKEN='))
    ?.slice('BERTH_WORKER_TOKEN='.length);

describe('DockerPool: worker tokens and the deployment id (issue #36 item 9)', () => {
  it('three starts on one key store leave one worker token per endpoint, reused from the containers that carry it', async () => {
    const daemon = new FakeDaemon();
    const keys = new MemoryKeyStore();
    // A token of a start before deployments had ids, no longer carried by any container.
    await createApiKey(keys, { worker: true, endpoints: ['ep'], name: 'berth serve --scale test: ep' });

    const first = await start(daemon, keys);
    await first.tick();
    await first.stop();
    const name = `test-${first.deployment}-ep-1`;
    expect([...daemon.containers.values()].map((c) => c.Names[0])).toEqual([`/${name}`]);
    expect(daemon.byName(name)!.Labels).toEqual({
      'berth.control-plane': 'test',
      'berth.deployment': first.deployment,
      'berth.endpoint': 'ep',
    });
    const t1 = tokenOf(daemon, name)!;
    expect((await liveTokens(keys)).map((k) => k.name)).toEqual([
      `berth serve --scale test: ep (deployment ${first.deployment})`,
    ]);

    // Second start, its container still running: same deployment, the same token, no new container.
    const second = await start(daemon, keys);
    expect(second.deployment).toBe(first.deployment);
    await second.tick();
    await second.stop();
    expect(daemon.containers.size).toBe(1);
    expect((await keys.list()).filter((k) => k.kind === 'worker')).toHaveLength(2); // the old one (revoked) and t1
    expect(second.lines.join('\n')).toMatch(/adopted worker container test-\w+-ep-1"/);

    // Third start after the containers were removed: a new token, t1 revoked (no container carries it).
    daemon.containers.clear();
    const third = await start(daemon, keys);
    await third.tick();
    await third.stop();
    const live = await liveTokens(keys);
    expect(live).toHaveLength(1);
    expect(tokenOf(daemon, name)).not.toBe(t1);
    expect(third.lines.join('\n')).toMatch(/endpoint ep: revoked 1 worker token\(s\) no container uses/);
  });
});

describe('DockerPool: containers it did not start (issue #36 item 10)', () => {
  it('a name conflict never removes a container without its labels; another deployment is left alone', async () => {
    const daemon = new FakeDaemon();
    const keys = new MemoryKeyStore();
    const s = await start(daemon, keys);
    const mine = `test-${s.deployment}-ep-1`;
    const stranger = daemon.add(mine, { labels: {} });
    // Another deployment sharing the scale name: its container of an endpoint this config does not have, and
    // one of the same endpoint.
    const other = { 'berth.control-plane': 'test', 'berth.deployment': 'ffffffff' };
    const gone = daemon.add('test-ffffffff-gone-1', { labels: { ...other, 'berth.endpoint': 'gone' } });
    const theirs = daemon.add('test-ffffffff-ep-1', { labels: { ...other, 'berth.endpoint': 'ep' } });
    await s.tick(); // the create of ...-ep-1 meets the stranger: left alone
    await s.tick(); // the next worker takes ...-ep-2
    await s.stop();
    expect(daemon.calls.filter((c) => c.startsWith('remove') || c.startsWith('stop'))).toEqual([]);
    expect([...daemon.containers.keys()]).toEqual(expect.arrayContaining([stranger, gone, theirs]));
    expect(daemon.byName(`test-${s.deployment}-ep-2`)?.State).toBe('running');
    const log = s.lines.join('\n');
    expect(log).toMatch(new RegExp(`a container named ${mine} exists without this deployment's labels: left alone`));
    expect(log).toMatch(/2 container\(s\) labelled berth.control-plane=test belong to another deployment/);
  });
});

describe('DockerPool: adopting containers of an earlier start (issue #36 item 12)', () => {
  it('one started for another address is not counted: a new one starts at once; it is stopped if it does not connect', async () => {
    const daemon = new FakeDaemon();
    const keys = new MemoryKeyStore();
    const s = await start(daemon, keys);
    const labels = { 'berth.control-plane': 'test', 'berth.deployment': s.deployment, 'berth.endpoint': 'ep' };
    const stale = `test-${s.deployment}-ep-1`;
    daemon.add(stale, { labels, env: { BERTH_URL: 'http://127.0.0.1:9999', BERTH_WORKER_TOKEN: 'berth_wk_old' } });
    await s.tick();
    // The queued job gets a container of this start in the same look, not after the stale one's timeout.
    expect(daemon.byName(`test-${s.deployment}-ep-2`)?.State).toBe('running');
    expect(s.lines.join('\n')).toMatch(
      /adopted worker container test-\w+-ep-1: not counted until it connects \(its BERTH_URL is http:\/\/127.0.0.1:9999, this start's is http:\/\/127.0.0.1:8080\)/,
    );
    s.advance(29_000);
    await s.tick();
    expect(daemon.calls).not.toContain(`stop ${stale}`);
    s.advance(1_000);
    await s.tick();
    expect(daemon.calls).toContain(`stop ${stale}`);
    expect(s.lines.join('\n')).toMatch(
      /stopping adopted worker container test-\w+-ep-1: it did not connect within 30 s/,
    );
    await s.tick(); // listed as exited: removed, not a crash of this start's workers (no backoff)
    await s.stop();
    expect(daemon.byName(stale)).toBeUndefined();
    expect(s.lines.join('\n')).not.toMatch(/next start in/);
  });

  it('one that differs but connects is counted from then on, and not stopped', async () => {
    const daemon = new FakeDaemon();
    const keys = new MemoryKeyStore();
    const s = await start(daemon, keys, { inQueue: 0 });
    const labels = { 'berth.control-plane': 'test', 'berth.deployment': s.deployment, 'berth.endpoint': 'ep' };
    const old = `test-${s.deployment}-ep-1`;
    daemon.add(old, { labels, image: 'ep-image:previous', env: { BERTH_URL: URL } });
    await s.tick();
    s.connect(old);
    expect(s.lines.join('\n')).toMatch(/its image is ep-image:previous, this start's is ep-image/);
    expect(s.lines.join('\n')).toMatch(/adopted worker container test-\w+-ep-1 connected: counted/);
    s.setQueue(1);
    s.advance(60_000);
    await s.tick();
    await s.stop();
    expect(daemon.calls.filter((c) => c.startsWith('stop') || c.startsWith('create'))).toEqual([]);
  });
});
