// The unmodified `runpod-sdk` npm client against `berth dev` running examples/basic.
import runpodSdk from 'runpod-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASIC_ENDPOINTS, pollUntil, startBerthDev, type BerthDev } from './harness.test-helpers.js';

let berth: BerthDev;
const endpoint = (id: string) => {
  const ep = runpodSdk(berth.apiKey, { baseUrl: `${berth.url}/v2` }).endpoint(id);
  if (!ep) throw new Error('no endpoint');
  return ep;
};

beforeAll(async () => {
  berth = await startBerthDev({ waitForWorkers: BASIC_ENDPOINTS });
});
afterAll(async () => {
  await berth?.[Symbol.asyncDispose]();
});

describe('runpod-sdk against berth dev', () => {
  it('runSync returns the completed job', async () => {
    const res = await endpoint('echo').runSync({ input: { hello: 'world', n: [1, 2, 3] } });
    expect(res.status).toBe('COMPLETED');
    expect(res.output).toEqual({ hello: 'world', n: [1, 2, 3] });
    expect(res.id).toMatch(/^sync-/);
    expect(typeof res.delayTime).toBe('number');
    expect(typeof res.executionTime).toBe('number');
  });

  it('run then status until COMPLETED', async () => {
    const ep = endpoint('echo');
    const queued = await ep.run({ input: { x: 42 } });
    expect(queued.id).toMatch(/^[0-9a-f-]+-u1$/);
    expect(queued.status).toBe('IN_QUEUE');
    const done = await pollUntil(
      () => ep.status(queued.id),
      (s) => s.status === 'COMPLETED',
      10_000,
    );
    expect(done).toMatchObject({ id: queued.id, status: 'COMPLETED', output: { x: 42 } });
  });

  it('stream yields every chunk in order, then the job is COMPLETED with the aggregate', async () => {
    const ep = endpoint('stream');
    const { id } = await ep.run({ input: { chunks: 6, delayMs: 50 } });
    const chunks: unknown[] = [];
    for await (const part of ep.stream(id)) chunks.push((part as { output: unknown }).output);
    expect(chunks).toEqual(Array.from({ length: 6 }, (_, i) => ({ index: i, text: `chunk ${i}` })));
    const final = await pollUntil(
      () => ep.status(id),
      (s) => s.status === 'COMPLETED',
      10_000,
    );
    expect((final as { output: unknown }).output).toEqual(chunks);
  });

  it('cancel stops a running job: status becomes CANCELLED', async () => {
    const ep = endpoint('sleep');
    const { id } = await ep.run({ input: { ms: 60_000 } });
    await pollUntil(
      () => ep.status(id),
      (s) => s.status === 'IN_PROGRESS',
      10_000,
    );
    const cancelled = await ep.cancel(id);
    expect(cancelled).toMatchObject({ id, status: 'CANCELLED' });
    const after = await ep.status(id);
    expect(after.status).toBe('CANCELLED');
    // The handler saw the abort signal (its listener logs with the job id).
    await berth.waitForLine(new RegExp(`aborted after .*jobId=${id}`), 5_000);
  });

  it('health reports jobs and workers', async () => {
    const health = await endpoint('echo').health();
    expect(health.jobs).toEqual({
      completed: expect.any(Number),
      failed: expect.any(Number),
      inProgress: expect.any(Number),
      inQueue: expect.any(Number),
      retried: expect.any(Number),
    });
    expect(health.jobs.completed).toBeGreaterThanOrEqual(2);
    expect(health.workers).toMatchObject({
      idle: expect.any(Number),
      running: expect.any(Number),
      ready: expect.any(Number),
      initializing: expect.any(Number),
    });
    expect(health.workers.idle + health.workers.running).toBe(1);
  });

  it('purgeQueue removes queued jobs only; running ones keep running', async () => {
    const ep = endpoint('sleep');
    // sleep runs 1 worker x concurrency 2: two run, four wait.
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await ep.run({ input: { ms: 30_000 } })).id);
    const statuses = () => Promise.all(ids.map((id) => ep.status(id)));
    await pollUntil(statuses, (all) => all.filter((s) => s.status === 'IN_PROGRESS').length === 2, 10_000);
    const purged = await ep.purgeQueue();
    expect(purged).toEqual({ removed: 4, status: 'completed' });
    // Read statuses with fetch: the SDK's HTTP client throws on a 404.
    const after = await Promise.all(ids.map((id) => berth.json(`/v2/sleep/status/${id}`)));
    const running = after.filter((r) => r.body.status === 'IN_PROGRESS');
    expect(running).toHaveLength(2);
    // The purged ones are gone: 404 job_not_found.
    for (const r of after.filter((r) => r.body.status !== 'IN_PROGRESS'))
      expect(r).toMatchObject({ status: 404, body: { code: 'job_not_found' } });
    expect((await ep.health()).jobs.inQueue).toBe(0);
    for (const r of running) await ep.cancel(r.body.id);
  });
});
