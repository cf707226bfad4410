import { createLogger } from '@berth/protocol/log';
import type { WorkerControl } from '@berth/server';
import { GpuAllocator, ScaleLoop } from '@berth/server/scaling';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/index.js';
import { DockerPool } from './docker-pool.js';
import { FakeDaemon } from './fake-daemon.test-helpers.js';

// Issue #39, GPUs placed per worker: the create calls `berth serve --scale docker` sends for endpoints with
// `gpusPerWorker`, checked against the fake daemon (no GPU or dockerd needed to see what each container is given).

const config = resolveConfig(
  {
    gpus: { devices: ['0', '1', '2', '3'] },
    endpoints: {
      a: { worker: './a.ts', minWorkers: 0, maxWorkers: 2, gpusPerWorker: 2, idleTimeoutMs: 1_000 },
      b: { worker: './b.ts', minWorkers: 0, maxWorkers: 2, gpusPerWorker: 1, idleTimeoutMs: 1_000 },
    },
  },
  '/p/berth.config.json',
);

/** A Docker scaler of endpoints a and b on `daemon`, its clock, queues, log and what it told the control plane. */
function start(daemon: FakeDaemon) {
  const queue: Record<string, number> = { a: 0, b: 0 };
  const reason: Record<string, string | undefined> = {};
  const held: Record<string, unknown> = {};
  const lines: string[] = [];
  const workers: WorkerControl = {
    connected: () => [],
    setExpected: () => {},
    setBroken: () => {},
    stopping: () => {},
    setWaitReason: (ep, r) => void (reason[ep] = r),
    setGpus: (ep, h) => void (held[ep] = h),
    setBatchLane: () => {},
    setLane: () => {},
    batchBacklog: async () => 0,
    coldStart: () => {},
    startFailed: () => {},
    on: () => () => {},
  };
  const gpus = new GpuAllocator(config.gpus!.devices, (ep) => workers.setGpus(ep, gpus.holdings(ep)));
  let now = 1_000_000;
  const logger = createLogger({ write: (l) => void lines.push(l) });
  const pool = new DockerPool({
    workers,
    gpus,
    docker: daemon.api(),
    endpoints: config.endpoints.map((ep) => ({ ep, image: `${ep.id}-image` })),
    name: 'test',
    url: 'http://127.0.0.1:8080',
    tokens: { deployment: async () => 'd0d0d0d0', settle: async () => ({ token: 'berth_wk_x', revoked: 0 }) },
    logger,
    now: () => now,
  });
  const loop = new ScaleLoop({
    server: { workers, health: async (ep) => ({ jobs: { inQueue: queue[ep] ?? 0, inProgress: 0 } }) as never },
    pool,
    gpus,
    endpoints: config.endpoints,
    logger,
    now: () => now,
  });
  const tick = async () => {
    await loop.tick();
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  };
  return { gpus, queue, reason, held, lines, tick, advance: (ms: number) => void (now += ms), pool, loop };
}

/** The DeviceRequests and the `berth.gpus` label of each container created, by name. */
function placed(daemon: FakeDaemon): Record<string, unknown> {
  return Object.fromEntries(
    [...daemon.specs].map(([name, spec]) => [
      name.replace('test-d0d0d0d0-', ''),
      { requests: spec.HostConfig.DeviceRequests, label: spec.Labels['berth.gpus'] },
    ]),
  );
}

const request = (...ids: string[]) => [{ Driver: 'nvidia', DeviceIDs: ids, Capabilities: [['gpu']] }];

describe('DockerPool placing GPUs', () => {
  it('each container is created with its own DeviceIDs; a worker short of GPUs waits; a stopped one frees them for the other endpoint', async () => {
    const daemon = new FakeDaemon();
    const s = start(daemon);
    s.queue['a'] = 2;
    s.queue['b'] = 1;
    await s.tick();
    expect(placed(daemon)).toEqual({
      'a-1': { requests: request('0', '1'), label: '0,1' },
      'a-2': { requests: request('2', '3'), label: '2,3' },
    });
    expect(s.reason).toEqual({ b: 'gpu', a: 'cold_start' });
    expect(s.held['a']).toEqual([
      { workerId: 'test-d0d0d0d0-a-1', devices: ['0', '1'] },
      { workerId: 'test-d0d0d0d0-a-2', devices: ['2', '3'] },
    ]);
    expect(s.lines.join('\n')).toMatch(
      /endpoint b waits for a GPU: 0 worker\(s\), 1 more wanted, 1 GPU\(s\) each, 0 of 4 free/,
    );

    // a's jobs are done: its containers are stopped once idle; their devices are free only once they have exited.
    s.queue['a'] = 0;
    await s.tick();
    s.advance(1_000);
    await s.tick();
    expect(daemon.calls.filter((c) => c.startsWith('stop'))).toEqual([
      'stop test-d0d0d0d0-a-2',
      'stop test-d0d0d0d0-a-1',
    ]);
    expect(s.gpus.freeCount()).toBe(0);
    await s.tick(); // listed as exited: removed, devices freed; b's worker is created on the first free one
    await s.tick();
    expect(s.gpus.holdings()).toEqual([{ workerId: 'test-d0d0d0d0-b-1', devices: ['0'] }]);
    expect((placed(daemon) as Record<string, unknown>)['b-1']).toEqual({ requests: request('0'), label: '0' });
    expect(s.held['a']).toEqual([]);
    expect(s.reason['b']).toBe('cold_start');
    await s.loop.stop();
    s.pool.close();
  });

  it('a container found at start keeps the GPUs of its label; new ones get the others', async () => {
    const daemon = new FakeDaemon();
    daemon.add('test-d0d0d0d0-b-1', {
      labels: {
        'berth.control-plane': 'test',
        'berth.deployment': 'd0d0d0d0',
        'berth.endpoint': 'b',
        'berth.gpus': '1',
      },
      image: 'b-image',
      env: { BERTH_URL: 'http://127.0.0.1:8080', BERTH_WORKER_TOKEN: 'berth_wk_x' },
    });
    const s = start(daemon);
    s.queue['a'] = 1;
    s.queue['b'] = 2;
    await s.tick();
    expect(s.gpus.holdings()).toEqual([
      { workerId: 'test-d0d0d0d0-a-1', devices: ['0', '2'] },
      { workerId: 'test-d0d0d0d0-b-1', devices: ['1'] },
      { workerId: 'test-d0d0d0d0-b-2', devices: ['3'] },
    ]);
    expect(placed(daemon)).toEqual({
      'a-1': { requests: request('0', '2'), label: '0,2' },
      'b-2': { requests: request('3'), label: '3' },
    });
    await s.loop.stop();
    s.pool.close();
  });

  it('a config with both gpusPerWorker and docker.gpus is refused with a clear message', () => {
    expect(() =>
      resolveConfig(
        { endpoints: { a: { worker: './a.ts', gpusPerWorker: 1, docker: { gpus: 'all' } } } },
        '/p/berth.config.json',
      ),
    ).toThrow(
      /endpoints\.a\.gpusPerWorker: give either "gpusPerWorker" \(each worker its own GPUs\) or "docker\.gpus"/,
    );
  });
});
