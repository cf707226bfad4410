/** The peer: BullMQ + its own redis-server (AOF everysec or always) in a temp dir, behind an HTTP front. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { BENCH_DIR, freePort, heapUsed, start, startTs, type Proc } from '../../lib/proc.js';
import { dirBytes, health, healthWorker } from '../common.js';
import type { Running, Target } from '../types.js';

async function startPeer(fsync: 'everysec' | 'always', dir: string): Promise<Running> {
  const redisPort = await freePort();
  const port = await freePort();
  const t0 = performance.now();
  // Our own redis-server on a free port (never the shared one on 6379); no RDB snapshots, AOF only.
  const redis = start('redis-server', [
    '--port',
    String(redisPort),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--appendonly',
    'yes',
    '--appendfsync',
    fsync,
    '--save',
    '',
    '--maxmemory-policy',
    'noeviction',
  ]);
  await redis.waitFor(/Ready to accept connections/);
  const env = { PORT: String(port), REDIS_PORT: String(redisPort) };
  const front = startTs(join(BENCH_DIR, 'targets/bullmq/front.ts'), env, {
    ipc: true,
    nodeArgs: ['--expose-gc', '--import', join(BENCH_DIR, 'lib/heap-probe.mjs')],
  });
  await front.waitFor(/listening/);
  const readyMs = performance.now() - t0;
  const url = `http://127.0.0.1:${port}`;
  const workers = new Set<Proc>();
  const base = (ep: string) => `${url}/v2/${ep}`;
  return {
    readyMs,
    base,
    headers: {},
    serverProcs: () => [front, redis],
    heapUsed: () => heapUsed(front),
    storeBytes: async () => dirBytes(dir),
    startWorker: async (ep) => {
      const w = startTs(join(BENCH_DIR, 'targets/bullmq/worker.ts'), { ...env, BENCH_HOLD: '1' }, { ipc: true });
      workers.add(w);
      return healthWorker(w, base(ep), {});
    },
    completed: async (ep) => (await health(base(ep), {})).completed,
    stop: async () => {
      await Promise.all([...workers].map((w) => w.kill()));
      await front.kill();
      await redis.kill();
    },
  };
}

export const BULLMQ_TARGETS: Target[] = (['everysec', 'always'] as const).map((fsync) => ({
  name: `bullmq-aof-${fsync}`,
  description: `BullMQ + redis-server (--appendfsync ${fsync}), HTTP front with one shared QueueEvents, worker concurrency 64`,
  workloads: ['runsync', 'run', 'status', 'fill'],
  unavailable: async () =>
    spawnSync('redis-server', ['--version']).status === 0 ? undefined : 'redis-server is not installed',
  start: (dir: string) => startPeer(fsync, dir),
}));
