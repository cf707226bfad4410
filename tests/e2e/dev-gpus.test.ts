import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HealthReply } from '@berth/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { pollUntil, REPO_ROOT, startBerthDev } from './harness.test-helpers.js';

// Issue #39, GPUs placed per worker, through a real `berth dev`: each worker process sees its own devices in
// CUDA_VISIBLE_DEVICES (no GPU is needed to check the placement: the worker echoes the variable).

mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const tmp = mkdtempSync(join(REPO_ROOT, '.berth', 'gpus-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
writeFileSync(
  join(tmp, 'cuda.ts'),
  `import { setTimeout as sleep } from 'node:timers/promises';
import { start } from '@berth/worker';
start({ handler: async (job) => {
  await sleep(Number(job.input.ms ?? 0));
  return { worker: process.env.BERTH_WORKER_ID, cuda: process.env.CUDA_VISIBLE_DEVICES };
} });
`,
);

type Out = { worker: string; cuda: string };

describe('berth dev: GPUs placed per worker', () => {
  it('each worker process gets its own CUDA_VISIBLE_DEVICES; another endpoint waits for a GPU (waitingFor gpu) and gets the freed ones', async () => {
    const config = join(tmp, 'berth.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        gpus: { devices: ['0', '1', '2'] },
        endpoints: {
          one: { worker: './cuda.ts', maxWorkers: 3, gpusPerWorker: 1, idleTimeoutMs: 1_500 },
          pair: { worker: './cuda.ts', maxWorkers: 1, gpusPerWorker: 2, idleTimeoutMs: 60_000 },
        },
      }),
    );
    await using berth = await startBerthDev({ config });
    await berth.waitForLine(
      /Workers: one \(0-3 workers, idle 1500 ms, 1 GPU each\), pair \(0-1 workers, idle 60000 ms, 2 GPUs each\)/,
      5_000,
    );
    // Three slow jobs: three workers, one device each.
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await berth.post('/v2/one/run', { input: { ms: 2_000 } })).body.id);
    const health = await pollUntil(
      () => berth.json<HealthReply>('/v2/one/health'),
      (r) => (r.body.gpus?.length ?? 0) === 3,
      15_000,
      50,
    );
    expect(health.body.gpus).toEqual([
      { workerId: 'one-1', devices: ['0'] },
      { workerId: 'one-2', devices: ['1'] },
      { workerId: 'one-3', devices: ['2'] },
    ]);
    // pair needs two devices: none is free while one's workers run (and until they are stopped, idle).
    const queued = (await berth.post('/v2/pair/run', { input: { ms: 0 } })).body.id;
    const waiting = await pollUntil(
      () => berth.json(`/v2/pair/status/${queued}`),
      (r) => r.body.waitingFor === 'gpu',
      10_000,
      50,
    );
    expect(waiting.body).toMatchObject({ status: 'IN_QUEUE', waitingFor: 'gpu' });
    expect((await berth.json<HealthReply>('/v2/pair/health')).body.waitingFor).toBe('gpu');
    await berth.waitForLine(/endpoint pair waits for a GPU/, 5_000);

    const outs: Out[] = [];
    for (const id of ids) {
      const r = await pollUntil(
        () => berth.json(`/v2/one/status/${id}`),
        (x) => x.body.status === 'COMPLETED',
        20_000,
      );
      outs.push(r.body.output as Out);
    }
    // Every worker saw exactly its own device.
    expect(Object.fromEntries(outs.map((o) => [o.worker, o.cuda]))).toEqual({
      'one-1': '0',
      'one-2': '1',
      'one-3': '2',
    });

    // one's workers go idle and are stopped: pair's worker starts on freed devices and runs the job.
    const done = await pollUntil(
      () => berth.json(`/v2/pair/status/${queued}`),
      (r) => r.body.status === 'COMPLETED',
      30_000,
    );
    const got = done.body.output as Out;
    expect(got.worker).toBe('pair-1');
    expect(got.cuda.split(',')).toHaveLength(2);
    const pairHealth = (await berth.json<HealthReply>('/v2/pair/health')).body;
    expect(pairHealth.gpus).toEqual([{ workerId: 'pair-1', devices: got.cuda.split(',') }]);
    expect(pairHealth.waitingFor).toBeUndefined();
  }, 90_000);

  it('a config asking more GPUs per worker than the box has is refused at start', async () => {
    const config = join(tmp, 'too-many.config.json');
    writeFileSync(
      config,
      JSON.stringify({ gpus: { devices: ['0'] }, endpoints: { big: { worker: './cuda.ts', gpusPerWorker: 2 } } }),
    );
    await using berth = await startBerthDev({ config, readyTimeoutMs: 0 });
    expect((await berth.exited(15_000)).code).toBe(2);
    expect(berth.output).toMatch(
      /endpoints\.big\.gpusPerWorker: must be at most the 1 device\(s\) of "gpus" \(got 2\)/,
    );
  }, 30_000);
});
