import { fileURLToPath } from 'node:url';
import type { JobObject } from '@berth/protocol';
import { silentLogger } from '@berth/protocol/log';
import { createServer, type BerthServer } from '@berth/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PyWorker, runpodEnv, runpodSkipReason } from '../python/runpod-python.test-helpers.js';
import { RecordingProxy } from './recording-proxy.test-helpers.js';

const skip = runpodSkipReason();
if (skip) console.warn(`@berth/worker RunPod-mode comparison skipped: ${skip}`);
const TS_HANDLER = fileURLToPath(new URL('./fixtures/runpod-handler.ts', import.meta.url));
const KEY = 'k';
const TOKEN = 'worker-token';
const MODES = ['echo', 'stream', 'progress', 'fail', 'conc'] as const;
const quiet = silentLogger;

/**
 * `@berth/worker` started the way RunPod starts workers (`RUNPOD_WEBHOOK_GET_JOB` set) against Berth's own
 * pull-protocol side, beside the unmodified runpod-python worker running the same handlers, both through a
 * recording proxy: same results, and requests of the same shapes (methods, paths, query parameters, bodies).
 */
describe.skipIf(skip !== undefined)(`@berth/worker in RunPod mode${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let server: BerthServer;
  let proxy: RecordingProxy;
  const workers: PyWorker[] = [];
  const endpoints = [...MODES.flatMap((m) => [`py-${m}`, `ts-${m}`]), 'ts-cancel', 'ts-drain'];

  beforeAll(async () => {
    server = createServer({
      apiKeys: [KEY],
      workerTokens: [TOKEN],
      endpoints,
      pullHoldMs: 2000,
      heartbeatMs: 1000,
      workerGraceMs: 500,
      sweepIntervalMs: 100,
      logger: quiet,
    });
    const { url } = await server.listen({ port: 0 });
    proxy = new RecordingProxy(url);
    await proxy.listen();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.close({ drainMs: 100 });
  });

  const start = (kind: 'py' | 'ts', ep: string, handler: string, extra: Record<string, string> = {}) => {
    const env = { ...runpodEnv(proxy.url, ep, `${ep}-1`, TOKEN), BERTH_TEST_HANDLER: handler, ...extra };
    const w =
      kind === 'py'
        ? new PyWorker(env)
        : new PyWorker(env, TS_HANDLER, [process.execPath, '--import', 'tsx', TS_HANDLER]);
    workers.push(w);
    return w;
  };
  const api = async (path: string, body?: unknown): Promise<JobObject> => {
    const res = await fetch(`${server.options.publicUrl ?? proxy.url}/v2/${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await res.json()) as JobObject;
  };
  const finished = async (ep: string, id: string, ms = 30_000): Promise<JobObject> => {
    const end = performance.now() + ms;
    for (;;) {
      const j = await api(`${ep}/status/${id}`);
      if (['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(j.status)) return j;
      if (performance.now() > end)
        throw new Error(
          `${ep} job ${id} still ${j.status}\n${workers.map((w) => w.output.slice(-1500)).join('\n---\n')}`,
        );
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  /** Submits a sleep job and waits until a worker runs it. */
  const startedJob = async (ep: string, seconds: number): Promise<string> => {
    const { id } = await api(`${ep}/run`, { input: { seconds } });
    const end = performance.now() + 20_000;
    while ((await api(`${ep}/status/${id}`)).status !== 'IN_PROGRESS' && performance.now() < end)
      await new Promise((r) => setTimeout(r, 50));
    return id;
  };

  it('runs the same handlers as runpod-python with the same results and requests of the same shapes', async () => {
    for (const kind of ['py', 'ts'] as const) {
      for (const m of MODES)
        start(kind, `${kind}-${m}`, m === 'conc' ? 'sleep' : m, m === 'conc' ? { BERTH_TEST_CONCURRENCY: '2' } : {});
    }
    const inputs: Record<(typeof MODES)[number], unknown[]> = {
      echo: [{ hello: 'wörld' }],
      stream: [{ n: 3 }],
      progress: [{}],
      fail: [{ why: 'x' }],
      conc: [1, 2, 3, 4].map(() => ({ seconds: 1 })),
    };
    const results: Record<string, JobObject[]> = {};
    await Promise.all(
      ['py', 'ts'].flatMap((kind) =>
        MODES.map(async (m) => {
          const ids = await Promise.all(inputs[m].map(async (input) => (await api(`${kind}-${m}/run`, { input })).id));
          results[`${kind}-${m}`] = await Promise.all(ids.map((id) => finished(`${kind}-${m}`, id)));
        }),
      ),
    );

    for (const kind of ['py', 'ts']) {
      expect(results[`${kind}-echo`]![0]).toMatchObject({ status: 'COMPLETED', output: { hello: 'wörld' } });
      expect(results[`${kind}-stream`]![0]).toMatchObject({
        status: 'COMPLETED',
        output: [{ i: 0 }, { i: 1 }, { i: 2 }],
      });
      expect(results[`${kind}-progress`]![0]).toMatchObject({ status: 'COMPLETED', output: { done: true } });
      expect(results[`${kind}-fail`]![0]!.status).toBe('FAILED');
      expect(results[`${kind}-fail`]![0]!.error).toContain('boom: x');
      expect(results[`${kind}-conc`]!.map((j) => j.status)).toEqual([
        'COMPLETED',
        'COMPLETED',
        'COMPLETED',
        'COMPLETED',
      ]);
    }
    // Every request carries the bare token.
    expect(new Set(proxy.shapes.map((s) => s.auth))).toEqual(new Set([TOKEN]));
    for (const m of MODES) {
      const py = proxy.summary(`py-${m}`);
      const ts = proxy.summary(`ts-${m}`);
      // Pings carry job_id only when one falls while a job runs: timing, not shape. Both must ping.
      const noPing = (l: string[]) => l.filter((s) => !s.startsWith('GET ping?'));
      expect(py).toContain('GET ping?gpu&runpod_version');
      expect(ts).toContain('GET ping?gpu&runpod_version');
      if (m === 'conc') {
        for (const l of [py, ts]) expect(l).toContain('GET job-take-batch?batch_size&gpu&job_in_progress');
        continue;
      }
      expect(noPing(ts), `requests of ${m}`).toEqual(noPing(py));
    }
  }, 90_000);

  it('cancel aborts the handler through the stop channel; the worker reports nothing for it and takes the next job', async () => {
    const w = start('ts', 'ts-cancel', 'sleep');
    const id = await startedJob('ts-cancel', 30);
    expect((await api(`ts-cancel/cancel/${id}`, {})).status).toBe('CANCELLED');
    const stopEnd = performance.now() + 10_000;
    while (!w.output.includes('job stopped by the control plane') && performance.now() < stopEnd)
      await new Promise((r) => setTimeout(r, 50));
    expect(w.output).toContain('job stopped by the control plane');
    const next = await api('ts-cancel/run', { input: { seconds: 0.1 } });
    expect(await finished('ts-cancel', next.id!)).toMatchObject({ status: 'COMPLETED', workerId: 'ts-cancel-1' });
    expect(proxy.shapes.filter((s) => s.endpoint === 'ts-cancel' && s.op === 'job-done/<job>').length).toBe(1);
  }, 60_000);

  it('SIGTERM: stops taking jobs at once, finishes the running one, reports it and exits 0', async () => {
    const w = start('ts', 'ts-drain', 'sleep');
    const id = await startedJob('ts-drain', 1.5);
    const takes = () => proxy.shapes.filter((s) => s.endpoint === 'ts-drain' && s.op === 'job-take').length;
    const takesBefore = takes();
    const code = new Promise<number | null>((r) => w.child.once('exit', (c) => r(c)));
    w.child.kill('SIGTERM');
    expect(await code).toBe(0);
    expect(await api(`ts-drain/status/${id}`)).toMatchObject({ status: 'COMPLETED', output: { slept: 1.5 } });
    // A worker that was not draining would have asked for the next job once this one finished.
    expect(takes()).toBe(takesBefore);
  }, 60_000);
});
