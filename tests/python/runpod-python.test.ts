import type { HealthReply, JobObject } from '@berth/protocol';
import { silentLogger } from '@berth/protocol/log';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type BerthServer } from '../../packages/server/src/server.js';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.js';
import { PyWorker, runpodEnv, runpodSkipReason } from './runpod-python.test-helpers.js';

const skip = runpodSkipReason();
if (skip) console.warn(`runpod-python tests skipped: ${skip}`);

const KEY = 'test-api-key';
const TOKEN = 'test-worker-token';
const ENDPOINTS = ['echo', 'stream', 'fail', 'progress', 'sleep', 'conc', 'lost', 'unfit'];

/**
 * The unmodified runpod-python 1.12.0 worker (its own process group, clean HOME, machine checks skipped) against
 * a real Berth control plane on a loopback port.
 */
describe.skipIf(skip !== undefined)(
  `runpod-python workers on the pull protocol${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let server: BerthServer;
    let url = '';
    const workers: PyWorker[] = [];

    beforeAll(async () => {
      server = createServer({
        apiKeys: [KEY],
        workerTokens: [TOKEN],
        endpoints: ENDPOINTS,
        pullHoldMs: 2000,
        heartbeatMs: 1000,
        workerGraceMs: 500,
        sweepIntervalMs: 100,
        logger: quiet,
      });
      url = (await server.listen({ port: 0 })).url;
    });
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((w) => w.stop()));
    });
    afterAll(async () => {
      await server?.close({ drainMs: 100 });
    });

    const worker = (endpoint: string, workerId: string, handler: string, env: Record<string, string> = {}) => {
      const w = new PyWorker({ ...runpodEnv(url, endpoint, workerId, TOKEN), BERTH_TEST_HANDLER: handler, ...env });
      workers.push(w);
      return w;
    };
    const api = async <T = JobObject>(path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${url}/v2/${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return (await res.json()) as T;
    };
    const runsync = (ep: string, input: unknown) => api(`${ep}/runsync?wait=30000`, { input });
    const until = async <T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> => {
      const end = performance.now() + ms;
      for (;;) {
        const v = await fn();
        if (v !== undefined) return v;
        if (performance.now() > end)
          throw new Error(
            `timed out waiting for ${what}\n${workers.map((w) => w.output.slice(-2000)).join('\n---\n')}`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const health = (ep: string) => api<HealthReply>(`${ep}/health`);

    it('echoes, and /health counts the worker idle, then running', async () => {
      worker('echo', 'py-echo', 'echo');
      await until('worker idle', async () => ((await health('echo')).workers.idle === 1 ? true : undefined));
      const job = await runsync('echo', { hello: 'wörld', n: [1, 2] });
      expect(job).toMatchObject({ status: 'COMPLETED', output: { hello: 'wörld', n: [1, 2] }, workerId: 'py-echo' });
      worker('sleep', 'py-sleep', 'sleep');
      const { id } = await api('sleep/run', { input: { seconds: 2 } });
      await until('running', async () => ((await health('sleep')).workers.running === 1 ? true : undefined));
      expect((await api(`sleep/status/${id}`)).status).toBe('IN_PROGRESS');
    });

    it("runs a batch's requests, each with its batchId: the worker prefixes its log lines with it", async () => {
      const w = worker('echo', 'py-batch', 'echo');
      const b = await api<{ id: string }>('echo/batch', [{ input: { b: 1 } }, { input: { b: 2 } }]);
      await api(`echo/batch/${b.id}/finalize`, {});
      const ended = await until('the batch to end', async () => {
        const s = await api<{ finishedAt?: number; requestCompleted: number }>(`echo/batch/${b.id}`);
        return s.finishedAt ? s : undefined;
      });
      expect(ended.requestCompleted).toBe(2);
      // runpod-python 1.12 reads job["batchId"] and prefixes what it logs while handling the job.
      await until('the prefixed log line', async () => (w.output.includes(`[batchId=${b.id}]`) ? true : undefined));
    });

    it('streams a generator chunk by chunk and keeps the aggregate as output', async () => {
      worker('stream', 'py-stream', 'stream');
      const { id } = await api('stream/run', { input: { n: 4 } });
      const chunks: unknown[] = [];
      await until('stream end', async () => {
        const r = await api<{ status: string; stream: { output: unknown }[] }>(`stream/stream/${id}?wait=5000`);
        chunks.push(...r.stream.map((c) => c.output));
        return r.status === 'COMPLETED' ? true : undefined;
      });
      expect(chunks).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3 }]);
      expect((await api(`stream/status/${id}`)).output).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3 }]);
    });

    it("fails a job whose handler raises, with the worker's error", async () => {
      worker('fail', 'py-fail', 'fail');
      const job = await runsync('fail', { why: 'on purpose' });
      expect(job.status).toBe('FAILED');
      expect(JSON.parse(job.error!)).toMatchObject({
        error_type: "<class 'ValueError'>",
        error_message: 'boom: on purpose',
        worker_id: 'py-fail',
      });
    });

    it('shows progress while running and keeps the result when progress arrives after it', async () => {
      worker('progress', 'py-progress', 'progress');
      const { id } = await api('progress/run', { input: {} });
      const seen = await until('progress', async () => {
        const j = await api(`progress/status/${id}`);
        return j.status === 'IN_PROGRESS' && j.progress !== undefined ? j.progress : undefined;
      });
      expect(seen).toHaveProperty('pct');
      const done = await until('done', async () => {
        const j = await api(`progress/status/${id}`);
        return j.status === 'COMPLETED' ? j : undefined;
      });
      expect(done.output).toEqual({ done: true });
      await new Promise((r) => setTimeout(r, 500)); // late progress posts land now
      expect((await api(`progress/status/${id}`)).output).toEqual({ done: true });
    });

    it('cancel stops the running job on the worker (stops are re-offered), which then takes the next job', async () => {
      const w = worker('sleep', 'py-cancel', 'sleep');
      await until('worker', async () => ((await health('sleep')).workers.idle >= 1 ? true : undefined));
      const { id } = await api('sleep/run', { input: { seconds: 30 } });
      await until('running', async () =>
        (await api(`sleep/status/${id}`)).status === 'IN_PROGRESS' ? true : undefined,
      );
      const t0 = performance.now();
      expect((await api(`sleep/cancel/${id}`, {})).status).toBe('CANCELLED');
      await until(
        'worker stopped the job',
        async () => (w.output.includes(`${id} | Job stopped.`) ? true : undefined),
        10_000,
      );
      const stopMs = performance.now() - t0;
      const next = await runsync('sleep', { seconds: 0.1 });
      expect(next).toMatchObject({ status: 'COMPLETED', workerId: 'py-cancel' });
      expect(stopMs).toBeLessThan(5000);
    });

    it('runs 4 jobs at once with concurrency_modifier (job-take-batch)', async () => {
      const w = worker('conc', 'py-conc', 'sleep', { BERTH_TEST_CONCURRENCY: '4' });
      await until('worker', async () => ((await health('conc')).workers.idle === 1 ? true : undefined));
      const ids = await Promise.all(Array.from({ length: 8 }, () => api('conc/run', { input: { seconds: 1.5 } })));
      const t0 = performance.now();
      let maxRunning = 0;
      await until('all done', async () => {
        const h = await health('conc');
        maxRunning = Math.max(maxRunning, h.jobs.inProgress);
        return h.jobs.completed === 8 ? true : undefined;
      });
      // One at a time this would take 8 x 1.5 s plus a 1 s pause after each.
      expect(performance.now() - t0).toBeLessThan(9000);
      expect(maxRunning).toBe(4);
      expect(w.output).toContain('/job-take-batch/py-conc?gpu=berth&batch_size=4');
      for (const { id } of ids) expect((await api(`conc/status/${id}`)).workerId).toBe('py-conc');
    });

    it('a worker whose fitness check fails reports it before exiting: unhealthy in /health', async () => {
      const w = worker('unfit', 'py-unfit', 'echo', { BERTH_TEST_FITNESS_FAIL: 'model file missing' });
      await Promise.race([w.exited, new Promise((r) => setTimeout(r, 20_000))]);
      expect(w.child.exitCode).toBe(1);
      expect(w.output).toContain('Fitness check failed: check_model_files');
      expect((await health('unfit')).workers).toMatchObject({ unhealthy: 1, idle: 0, running: 0 });
      // The same worker id started again without the failing check: it connects and the report no longer counts.
      worker('unfit', 'py-unfit', 'echo');
      await until('healthy again', async () => {
        const h = (await health('unfit')).workers;
        return h.idle === 1 && h.unhealthy === 0 ? true : undefined;
      });
    });

    it('requeues the job of a worker killed mid-job, though its orphaned heartbeat still pings it', async () => {
      const a = worker('lost', 'py-lost-a', 'sleep');
      const { id } = await api('lost/run', { input: { seconds: 4 } });
      await until('running on a', async () =>
        (await api(`lost/status/${id}`)).workerId === 'py-lost-a' ? true : undefined,
      );
      a.killMain();
      await a.exited;
      worker('lost', 'py-lost-b', 'sleep');
      const done = await until(
        'done on b',
        async () => {
          const j = await api(`lost/status/${id}`);
          return j.status === 'COMPLETED' ? j : undefined;
        },
        25_000,
      );
      expect(done).toMatchObject({ workerId: 'py-lost-b', retries: 1, output: { slept: 4 } });
    }, 40_000);
  },
);

const quiet = silentLogger;

/** Issue #35: big values through an unmodified runpod-python worker, with the SQLite store keeping them as blobs. */
describe.skipIf(skip !== undefined)('runpod-python workers and blob files (SQLite)', () => {
  it('a 3 MB input and its 3 MB echo come back byte-exact', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-py-blobs-'));
    const server = createServer({
      apiKeys: [KEY],
      workerTokens: [TOKEN],
      endpoints: ['echo'],
      pullHoldMs: 2000,
      store: new SqliteStore({ file: join(dir, 'berth.sqlite') }),
      logger: quiet,
    });
    const { url } = await server.listen({ port: 0 });
    const w = new PyWorker({ ...runpodEnv(url, 'echo', 'py-big', TOKEN), BERTH_TEST_HANDLER: 'echo' });
    try {
      const input = JSON.stringify({ data: 'é'.repeat(1024 * 1024) + 'x'.repeat(1024 * 1024), n: 3 });
      const res = await fetch(`${url}/v2/echo/runsync?wait=60000`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: `{"input":${input}}`,
      });
      const text = await res.text();
      expect(JSON.parse(text).status).toBe('COMPLETED');
      expect(JSON.parse(text).output).toEqual(JSON.parse(input));
      // Both values went through blob files (the input as sent, the output as runpod-python serialized it).
      const files = readdirSync(join(dir, 'blobs'));
      expect(files.filter((f) => f.endsWith('.in'))).toHaveLength(1);
      expect(files.filter((f) => f.endsWith('.out'))).toHaveLength(1);
    } finally {
      await w.stop();
      await server.close({ drainMs: 100 });
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
