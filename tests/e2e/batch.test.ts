import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil, startBerthDev, type BerthDev } from './harness.test-helpers.js';

const CONFIG = fileURLToPath(new URL('./fixtures/batch/berth.config.json', import.meta.url));
const TERMINAL = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

/**
 * Batch handlers (`start({ batch })`) through the real `berth dev` and real worker processes: over the WebSocket
 * (`batch`) and over RunPod's pull protocol (`batch-pull`, a `command` endpoint: `job-take-batch`).
 */
describe('batch handlers through berth dev', () => {
  let berth: BerthDev;
  beforeAll(async () => {
    berth = await startBerthDev({
      config: CONFIG,
      waitForWorkers: ['batch', 'batch-pull', 'batch-stream'],
      readyTimeoutMs: 90_000,
    });
  }, 60_000);
  afterAll(async () => {
    await berth?.[Symbol.asyncDispose]();
  });

  const submit = async (ep: string, input: Record<string, unknown>, policy?: Record<string, unknown>) => {
    const res = await berth.post(`/v2/${ep}/run`, { input, ...(policy ? { policy } : {}) });
    expect(res.status).toBe(200);
    return res.body.id as string;
  };
  const finished = (ep: string, id: string, ms = 20_000) =>
    pollUntil(
      async () => (await berth.json(`/v2/${ep}/status/${id}`)).body,
      (b) => TERMINAL.includes(b.status),
      ms,
      50,
    );

  it.each(['batch', 'batch-pull'])(
    '%s: an idle worker runs a lone job alone; under load batches form',
    async (ep) => {
      const lone = await berth.post(`/v2/${ep}/runsync`, { input: { n: 0 } });
      expect(lone.body).toMatchObject({ status: 'COMPLETED', output: { n: 0, batchSize: 1 } });
      // A holding job keeps the worker busy while 12 more arrive: they form batches of several.
      const first = await submit(ep, { n: 1, mode: 'hold', holdMs: 400 });
      const ids = await Promise.all(Array.from({ length: 12 }, (_, i) => submit(ep, { n: i + 2 })));
      const outs = await Promise.all([first, ...ids].map((id) => finished(ep, id)));
      expect(outs.map((o) => o.status)).toEqual(Array(13).fill('COMPLETED'));
      const sizes = outs.map((o) => o.output.batchSize as number);
      expect(Math.max(...sizes)).toBeGreaterThanOrEqual(4);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(8); // maxSize
      expect(outs.map((o) => o.output.n)).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
    },
    60_000,
  );

  it('a refused input, an Error in a slot, a cancel and a timeout each touch only their job', async () => {
    const ep = 'batch';
    const blocker = await submit(ep, { n: 100, mode: 'hold', holdMs: 300 });
    // These queue behind the blocker and run as one batch.
    const bad = await submit(ep, { n: 'not a number' });
    const slot = await submit(ep, { n: 101, mode: 'slot-error' });
    const ok = await submit(ep, { n: 102 });
    const cancelled = await submit(ep, { n: 103, mode: 'hold', holdMs: 30_000 });
    const timedOut = await submit(ep, { n: 104, mode: 'hold', holdMs: 30_000 }, { executionTimeout: 5_000 });
    await pollUntil(
      async () => (await berth.json(`/v2/${ep}/status/${cancelled}`)).body.status,
      (s) => s === 'IN_PROGRESS',
      10_000,
      50,
    );
    await berth.post(`/v2/${ep}/cancel/${cancelled}`);
    expect(await finished(ep, cancelled)).toMatchObject({ status: 'CANCELLED' });
    expect(await finished(ep, bad)).toMatchObject({
      status: 'FAILED',
      error: expect.stringMatching(/^invalid_input: n:/),
    });
    expect(await finished(ep, slot)).toMatchObject({ status: 'FAILED', error: 'slot 101 failed' });
    expect(await finished(ep, timedOut)).toMatchObject({ status: 'TIMED_OUT' });
    // The batch returned once both holding jobs were aborted: the job beside them completed.
    const okJob = await finished(ep, ok);
    expect(okJob).toMatchObject({ status: 'COMPLETED', output: { n: 102 } });
    expect(okJob.output.batchSize).toBeGreaterThanOrEqual(2);
    expect(await finished(ep, blocker)).toMatchObject({ status: 'COMPLETED' });
    // A throw fails its own batch; the next job, alone, completes.
    const thrower = await berth.post(`/v2/${ep}/runsync`, { input: { n: 105, mode: 'throw' } });
    expect(thrower.body).toMatchObject({ status: 'FAILED', error: 'the batch threw' });
    expect((await berth.post(`/v2/${ep}/runsync`, { input: { n: 106 } })).body).toMatchObject({
      status: 'COMPLETED',
      output: { n: 106, batchSize: 1 },
    });
  }, 60_000);

  it('a streaming batch handler: each client reads its own chunks, in order, from /stream', async () => {
    const ep = 'batch-stream';
    const blocker = await submit(ep, { word: 'hold', steps: 1, holdMs: 300 });
    const words = ['alpha', 'beta', 'gamma', 'delta'];
    const ids = await Promise.all(words.map((word) => submit(ep, { word, steps: 4 })));
    const read = async (id: string) => {
      const chunks: { word: string; step: number; batch: number }[] = [];
      for (const end = Date.now() + 20_000; Date.now() < end; ) {
        const b = (await berth.json(`/v2/${ep}/stream/${id}`)).body;
        chunks.push(...(b.stream as { output: (typeof chunks)[number] }[]).map((s) => s.output));
        if (TERMINAL.includes(b.status)) return { status: b.status as string, chunks };
        await new Promise((r) => setTimeout(r, 30));
      }
      throw new Error(`job ${id} did not finish`);
    };
    const results = await Promise.all(ids.map(read));
    results.forEach((r, i) => {
      expect(r.status).toBe('COMPLETED');
      expect(r.chunks.map((c) => `${c.word}:${c.step}`)).toEqual([0, 1, 2, 3].map((s) => `${words[i]}:${s}`));
    });
    // They queued behind the blocker and streamed as one batch.
    expect(Math.max(...results.map((r) => r.chunks[0]!.batch))).toBeGreaterThanOrEqual(2);
    expect(await finished(ep, blocker)).toMatchObject({ status: 'COMPLETED' });
  }, 60_000);

  it('/health and /metrics show the batches the endpoint ran', async () => {
    const health = (await berth.json('/v2/batch/health')).body;
    expect(health.batch).toMatchObject({ maxSize: 8 });
    expect(health.batch.batches).toBeGreaterThan(0);
    expect(health.batch.jobs).toBeGreaterThan(health.batch.batches); // some batch held more than one job
    const metrics = await (await berth.fetch('/metrics')).text();
    expect(metrics).toMatch(/^berth_batch_size_count\{endpoint="batch"\} [1-9]\d*$/m);
  });
});
