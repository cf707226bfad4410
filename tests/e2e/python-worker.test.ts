import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PURE_PYTHON, runpodSkipReason } from '../python/runpod-python.test-helpers.js';
import { pollUntil, REPO_ROOT, startBerthDev } from './harness.test-helpers.js';

const skip = runpodSkipReason();
if (skip) console.warn(`berth dev with runpod-python workers skipped: ${skip}`);

// A copy of examples/python-worker (the test edits handler.py to check hot reload).
mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const tmp = mkdtempSync(join(REPO_ROOT, '.berth', 'python-'));
const home = mkdtempSync(join(REPO_ROOT, '.berth', 'python-home-'));
cpSync(join(REPO_ROOT, 'examples/python-worker'), tmp, { recursive: true });
const pids: number[] = [];
afterAll(() => {
  // Command workers have their own process groups: make sure none outlives the test.
  for (const pid of pids) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  rmSync(tmp, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

const ms = (t0: number) => Math.round(performance.now() - t0);
const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

const PY_ENV = {
  PATH: `/usr/bin:${process.env['PATH'] ?? '/bin'}`,
  HOME: home,
  ...PURE_PYTHON,
};

describe.skipIf(skip !== undefined)(
  `berth dev runs unmodified runpod-python workers ("command" endpoints)${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    it('echo, stream, progress, cancel and hot reload through berth dev', async () => {
      await using berth = await startBerthDev({
        config: join(tmp, 'berth.config.json'),
        waitForWorkers: ['py-echo', 'py-stream'],
        env: PY_ENV,
      });
      const trackPids = () => {
        for (const m of berth.output.matchAll(/worker started \(pid (\d+)\)/g)) pids.push(Number(m[1]));
      };
      trackPids();
      const figures: Record<string, number> = {};

      let t0 = performance.now();
      const echo = await berth.post('/v2/py-echo/runsync', { input: { hello: 'wörld' } });
      figures['echo runsync ms'] = ms(t0);
      expect(echo.body).toMatchObject({
        status: 'COMPLETED',
        output: { echo: { hello: 'wörld' } },
        workerId: 'py-echo-1',
      });

      t0 = performance.now();
      const { body: s } = await berth.post('/v2/py-stream/run', { input: { text: 'a b c d' } });
      const chunks: unknown[] = [];
      await pollUntil(
        async () => {
          const r = await berth.json(`/v2/py-stream/stream/${s.id}?wait=5000`);
          if (chunks.length === 0 && r.body.stream.length > 0) figures['stream first chunk ms'] = ms(t0);
          chunks.push(...r.body.stream.map((c: { output: unknown }) => c.output));
          return r.body.status;
        },
        (st) => st === 'COMPLETED',
        20_000,
        0,
      );
      figures['stream all chunks ms'] = ms(t0);
      expect(chunks).toEqual(['a', 'b', 'c', 'd']);
      expect((await berth.json(`/v2/py-stream/status/${s.id}`)).body.output).toEqual(['a', 'b', 'c', 'd']);

      const { body: slow } = await berth.post('/v2/py-echo/run', { input: { seconds: 30 } });
      const running = await pollUntil(
        () => berth.json(`/v2/py-echo/status/${slow.id}`),
        (r) => r.body.progress !== undefined,
        15_000,
      );
      expect(running.body).toMatchObject({ status: 'IN_PROGRESS', progress: { sleeping: 30 } });
      t0 = performance.now();
      expect((await berth.post(`/v2/py-echo/cancel/${slow.id}`)).body.status).toBe('CANCELLED');
      await berth.waitForLine(new RegExp(`${slow.id} \\| Job stopped`), 10_000);
      figures['cancel to handler stopped ms'] = ms(t0);
      t0 = performance.now();
      expect((await berth.post('/v2/py-echo/runsync', { input: { after: 'cancel' } })).body).toMatchObject({
        status: 'COMPLETED',
        output: { echo: { after: 'cancel' } },
      });
      figures['next job after cancel ms'] = ms(t0);

      // Hot reload: saving handler.py restarts its worker (a new process) and jobs run on the new code.
      const oldPid = Number(
        [...berth.output.matchAll(/\[py-echo\/py-echo-1\] worker started \(pid (\d+)\)/g)].at(-1)?.[1],
      );
      expect(groupAlive(oldPid)).toBe(true); // the worker and its heartbeat child
      const from = berth.lines.length;
      appendFileSync(join(tmp, 'handler.py'), '\n# edited\n');
      await berth.waitForLine(/handler\.py changed: reloading py-echo/, 10_000, from);
      await berth.waitForLine(/\[py-echo\/py-echo-1\] worker started \(pid \d+\)/, 10_000, from);
      trackPids();
      // The whole process group went: runpod-python's heartbeat child did not outlive its worker.
      await pollUntil(
        async () => groupAlive(oldPid),
        (alive) => !alive,
        5_000,
      );
      t0 = performance.now();
      expect((await berth.post('/v2/py-echo/runsync', { input: { reloaded: true } })).body).toMatchObject({
        status: 'COMPLETED',
        output: { echo: { reloaded: true } },
      });
      figures['first job after reload ms'] = ms(t0);
      console.log(
        `berth dev + runpod-python: ${JSON.stringify(figures)} (load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')})`,
      );
    }, 120_000);

    it('scales a command endpoint from zero to two workers on queued jobs, and back to zero when idle', async () => {
      const config = join(tmp, 'scale.config.json');
      writeFileSync(
        config,
        JSON.stringify({
          endpoints: { py: { command: 'python3 handler.py', minWorkers: 0, maxWorkers: 2, idleTimeoutMs: 1000 } },
        }),
      );
      await using berth = await startBerthDev({ config, env: PY_ENV });
      const t0 = performance.now();
      const ids = await Promise.all(
        [1, 2, 3, 4].map(async () => (await berth.post('/v2/py/run', { input: { seconds: 2 } })).body.id as string),
      );
      const jobs = await Promise.all(
        ids.map((id) =>
          pollUntil(
            () => berth.json(`/v2/py/status/${id}`),
            (r) => r.body.status === 'COMPLETED',
            60_000,
          ),
        ),
      );
      for (const m of berth.output.matchAll(/worker started \(pid (\d+)\)/g)) pids.push(Number(m[1]));
      expect(new Set(jobs.map((j) => j.body.workerId))).toEqual(new Set(['py-1', 'py-2']));
      const doneMs = ms(t0);
      await berth.waitForLine(/\[py\/py-1\] worker stopped/, 30_000);
      await berth.waitForLine(/\[py\/py-2\] worker stopped/, 30_000);
      // Without berth dev answering their held polls (20 s) at once, they would linger up to that long.
      expect(ms(t0) - doneMs).toBeLessThan(15_000);
      console.log(
        `berth dev scaling runpod-python 0 -> 2 -> 0: 4 jobs of 2 s done in ${doneMs} ms, both workers exited ${ms(t0) - doneMs} ms later (idle timeout 1 s); load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
      );
    }, 120_000);
  },
);
