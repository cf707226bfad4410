/** L0 (raw node:http echo) and L1 (HTTP -> FIFO -> WebSocket -> worker -> HTTP, written for the bench). */
import { join } from 'node:path';
import { BENCH_DIR, freePort, heapUsed, startTs, type Proc } from '../lib/proc.js';
import { health, healthWorker } from './common.js';
import type { Running, Target } from './types.js';

async function startScript(script: string): Promise<{ proc: Proc; url: string; readyMs: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const proc = startTs(
    join(BENCH_DIR, script),
    { PORT: String(port) },
    { ipc: true, nodeArgs: ['--expose-gc', '--import', join(BENCH_DIR, 'lib/heap-probe.mjs')] },
  );
  await proc.waitFor(/listening/);
  return { proc, url: `http://127.0.0.1:${port}`, readyMs: performance.now() - t0 };
}

export const L0: Target = {
  name: 'L0',
  description: 'raw `node:http` JSON echo (the HTTP limit; no queue, no worker)',
  workloads: ['runsync', 'big'],
  async start(): Promise<Running> {
    const { proc, url, readyMs } = await startScript('targets/l0/server.ts');
    return {
      readyMs,
      base: (ep) => `${url}/v2/${ep}`,
      headers: {},
      serverProcs: () => [proc],
      heapUsed: () => heapUsed(proc),
      storeBytes: async () => NaN,
      startWorker: async () => ({ proc, go: async () => {}, stop: async () => {} }),
      completed: async () => NaN,
      stop: () => proc.kill(),
    };
  },
};

export const L1: Target = {
  name: 'L1',
  description:
    'HTTP -> in-memory FIFO -> WebSocket (`ws`) -> worker process -> HTTP reply, no store/validation/auth (the design limit)',
  workloads: ['runsync', 'run', 'status', 'fill', 'stream'],
  async start(): Promise<Running> {
    const { proc, url, readyMs } = await startScript('targets/l1/server.ts');
    const workers = new Set<Proc>();
    const base = (ep: string) => `${url}/v2/${ep}`;
    return {
      readyMs,
      base,
      headers: {},
      serverProcs: () => [proc],
      heapUsed: () => heapUsed(proc),
      storeBytes: async () => NaN,
      startWorker: async (ep) => {
        const w = startTs(
          join(BENCH_DIR, 'targets/l1/worker.ts'),
          { BENCH_URL: url, BENCH_ENDPOINT: ep, BENCH_HOLD: '1' },
          { ipc: true },
        );
        workers.add(w);
        return healthWorker(w, base(ep), {});
      },
      completed: async (ep) => (await health(base(ep), {})).completed,
      stop: async () => {
        await Promise.all([...workers].map((w) => w.kill()));
        await proc.kill();
      },
    };
  },
};
