import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HealthReply } from '@berth/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { pollUntil, REPO_ROOT, startBerthDev, type BerthDev } from './harness.test-helpers.js';

mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const tmp = mkdtempSync(join(REPO_ROOT, '.berth', 'scaling-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
writeFileSync(
  join(tmp, 'nap.ts'),
  `import { setTimeout as sleep } from 'node:timers/promises';
import { start } from '@berth/worker';
start({ handler: async (job) => {
  await sleep(Number(job.input.ms ?? 0), undefined, { signal: job.signal });
  return { worker: process.env.BERTH_WORKER_ID };
} });
`,
);

const health = async (berth: BerthDev, ep: string) => (await berth.json<HealthReply>(`/v2/${ep}/health`)).body.workers;

describe('berth dev scaling', () => {
  it('scales from zero on a job (cold start visible as delayTime, initializing in /health), back to zero when idle, and again', async () => {
    const config = join(tmp, 'zero.config.json');
    writeFileSync(
      config,
      JSON.stringify({ endpoints: { nap: { worker: './nap.ts', maxWorkers: 1, idleTimeoutMs: 400 } } }),
    );
    await using berth = await startBerthDev({ config });
    await berth.waitForLine(/Workers: nap \(0-1 workers, idle 400 ms\)/, 5_000);
    expect(await health(berth, 'nap')).toMatchObject({ idle: 0, running: 0, initializing: 0 });

    // Cold: the job waits in the queue while a worker starts; /health shows it initializing meanwhile.
    const { body: cold } = await berth.post('/v2/nap/run', { input: { ms: 0 } });
    const seen = await pollUntil(
      () => health(berth, 'nap'),
      (w) => w.initializing === 1,
      5_000,
      20,
    );
    expect(seen).toMatchObject({ initializing: 1, idle: 0 });
    const coldDone = await pollUntil(
      () => berth.json(`/v2/nap/status/${cold.id}`),
      (r) => r.body?.status === 'COMPLETED',
      20_000,
    );

    // Warm: an idle worker takes the next job at once.
    const warm = await berth.post('/v2/nap/runsync', { input: { ms: 0 } });
    expect(warm.body.status).toBe('COMPLETED');
    expect(await health(berth, 'nap')).toMatchObject({ idle: 1, initializing: 0 });

    // Idle for idleTimeoutMs: back to zero workers.
    await berth.waitForLine(/scaling nap down: worker idle .*workerId=nap-1/, 10_000);
    await pollUntil(
      () => health(berth, 'nap'),
      (w) => w.idle + w.running + w.initializing + w.throttled === 0,
      10_000,
    );

    // Cold again.
    const again = await berth.post('/v2/nap/runsync', { input: { ms: 0 } });
    expect(again.body.status).toBe('COMPLETED');

    const figures = {
      coldDelayMs: coldDone.body.delayTime,
      warmDelayMs: warm.body.delayTime,
      coldAgainDelayMs: again.body.delayTime,
    };
    console.log(`scale from zero: ${JSON.stringify(figures)}`);
    expect(figures.coldDelayMs).toBeGreaterThan(figures.warmDelayMs);
    expect(figures.coldAgainDelayMs).toBeGreaterThan(figures.warmDelayMs);
    expect(berth.output.match(/scaling nap up/g)).toHaveLength(2);
  }, 60_000);

  it('scales up on queue depth up to maxWorkers (concurrency jobs each), no further', async () => {
    const config = join(tmp, 'depth.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        endpoints: { nap: { worker: './nap.ts', minWorkers: 0, maxWorkers: 2, concurrency: 1, idleTimeoutMs: 60_000 } },
      }),
    );
    await using berth = await startBerthDev({ config });
    const ids = await Promise.all(
      [1, 2, 3].map(async () => (await berth.post('/v2/nap/run', { input: { ms: 1_500 } })).body.id as string),
    );
    const busy = await pollUntil(
      () => health(berth, 'nap'),
      (w) => w.running === 2,
      20_000,
      50,
    );
    expect(busy.running + busy.idle + busy.initializing).toBe(2);
    const results = await Promise.all(
      ids.map((id) =>
        pollUntil(
          () => berth.json(`/v2/nap/status/${id}`),
          (r) => r.body?.status === 'COMPLETED',
          30_000,
        ),
      ),
    );
    expect(new Set(results.map((r) => r.body.output.worker))).toEqual(new Set(['nap-1', 'nap-2']));
    expect(berth.output).not.toMatch(/nap-3/);
  }, 60_000);
});
