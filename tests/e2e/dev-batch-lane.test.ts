import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HealthReply } from '@berth/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { pollUntil, REPO_ROOT, startBerthDev } from './harness.test-helpers.js';

mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const tmp = mkdtempSync(join(REPO_ROOT, '.berth', 'batch-lane-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
writeFileSync(
  join(tmp, 'nap.ts'),
  `import { setTimeout as sleep } from 'node:timers/promises';
import { start } from '@berth/worker';
start({ handler: async (job) => {
  await sleep(Number(job.input.ms ?? 0), undefined, { signal: job.signal });
  return { worker: process.env.BERTH_WORKER_ID, lane: process.env.BERTH_LANE ?? null };
} });
`,
);

const BATCH = 6;
const BATCH_MS = 500;

describe('berth dev batch lane', () => {
  it('runs a batch on its lane worker while /runsync calls keep the interactive worker, then scales the lane to zero', async () => {
    const config = join(tmp, 'lane.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        endpoints: {
          nap: { worker: './nap.ts', minWorkers: 1, maxWorkers: 1, idleTimeoutMs: 500, batch: { maxWorkers: 1 } },
        },
      }),
    );
    await using berth = await startBerthDev({ config, waitForWorkers: ['nap'] });

    const created = await berth.post(
      '/v2/nap/batch',
      Array.from({ length: BATCH }, (_, i) => ({ input: { ms: BATCH_MS, i } })),
    );
    expect(created.status).toBe(200);
    const batchId = created.body.id as string;
    const requestIds = created.body.requestIds as string[];
    expect(requestIds).toHaveLength(BATCH);
    expect((await berth.post(`/v2/nap/batch/${batchId}/finalize`)).status).toBe(200);
    // The last request waits for the lane (its worker is only starting).
    const last = await berth.json(`/v2/nap/status/${requestIds.at(-1)}`);
    expect(last.body).toMatchObject({ status: 'IN_QUEUE', waitingFor: 'batch_lane' });
    await berth.waitForLine(/scaling nap up.*lane=batch|lane=batch.*scaling nap up/, 10_000);

    // Interactive calls while the batch runs: served by the interactive worker, without waiting behind the batch.
    await pollUntil(
      () => berth.json(`/v2/nap/batch/${batchId}`),
      (r) => r.body.requestInProgress > 0,
      20_000,
      20,
    );
    const interactive = [];
    for (let i = 0; i < 5; i++) {
      const r = await berth.post('/v2/nap/runsync', { input: { ms: 0 } });
      expect(r.body).toMatchObject({ status: 'COMPLETED', output: { worker: 'nap-1', lane: null } });
      interactive.push(r.body.delayTime as number);
    }
    const during = await berth.json(`/v2/nap/batch/${batchId}`);
    expect(during.body.done).toBe(false);
    console.log(`interactive delayTime while the batch ran (ms): ${interactive.join(', ')}`);
    for (const d of interactive) expect(d).toBeLessThan(BATCH_MS);

    const done = await pollUntil(
      () => berth.json(`/v2/nap/batch/${batchId}`),
      (r) => r.body.done === true,
      30_000,
    );
    expect(done.body).toMatchObject({ requestTotal: BATCH, requestCompleted: BATCH, requestFailed: 0 });
    const page = await berth.json(`/v2/nap/batch/${batchId}/requests?limit=100`);
    const outputs = (page.body.requests as { output: { worker: string; lane: string } }[]).map((r) => r.output);
    expect(outputs).toHaveLength(BATCH);
    for (const o of outputs) expect(o).toEqual({ worker: 'nap-batch-1', lane: 'batch' });

    // No batch left: the lane goes back to zero; the interactive worker stays (minWorkers 1).
    await berth.waitForLine(/scaling nap down: worker idle .*workerId=nap-batch-1/, 15_000);
    const w = await pollUntil(
      () => berth.json<HealthReply>('/v2/nap/health'),
      (r) => r.body.workers.idle + r.body.workers.running + r.body.workers.initializing === 1,
      15_000,
    );
    expect(w.body.workers).toMatchObject({ idle: 1, running: 0, initializing: 0 });
  }, 90_000);
});
