import type { HealthReply } from '@berth/protocol';
import { describe, expect, it } from 'vitest';
import { call, listening, ScriptedWorker } from '../testing.test-helpers.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import { makeJob } from '../store/conformance/fixtures.test-helpers.js';
import { batchLanePolicy, batchLaneViews } from './batch-lane.js';
import type { WorkerControl } from './worker-control.js';

/** A released batch of `k` jobs on `echo`, stored directly (no pump: the next /run or hello dispatches). */
async function releasedBatch(store: MemoryStore, id: string, k: number): Promise<string[]> {
  const now = Date.now();
  const jobs = Array.from({ length: k }, () =>
    makeJob({ endpointId: 'echo', createdAt: now, queuedAt: now, expiresAt: now + 3_600_000 }),
  );
  const b = store.batches;
  await b.createBatch({ id, endpointId: 'echo', status: 'DRAFT', createdAt: now, total: 0 }, jobs, {
    maxQueued: 100,
    maxOpen: 10,
  });
  await b.finalizeBatch(id, now);
  await b.releaseBatch(id, 100);
  return jobs.map((j) => j.id);
}

describe('batch lane dispatch', () => {
  it('lane workers run batch jobs only, the other workers interactive jobs only; queued batch jobs wait for batch_lane', async () => {
    const store = new MemoryStore();
    await using t = await listening({ store });
    t.server.workers.setBatchLane('echo', true);
    t.server.workers.setLane('lane-1', 'batch');
    const inter = await ScriptedWorker.connect(t.url, { workerId: 'int-1' });
    const lane = await ScriptedWorker.connect(t.url, { workerId: 'lane-1' });
    await inter.next('welcome');
    await lane.next('welcome');
    const [b1, b2] = await releasedBatch(store, 'batch_a', 2);
    expect(await t.server.workers.batchBacklog('echo')).toBe(2);

    // One /run pumps both lanes: the interactive worker gets it, the lane worker the oldest batch job.
    const run = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: { n: 1 } } })).body.id as string;
    const a1 = await inter.next('job.assign');
    const l1 = await lane.next('job.assign');
    expect(a1.id).toBe(run);
    expect(l1).toMatchObject({ id: b1, batchId: 'batch_a' });
    const queued = (await call(t.server, 'GET', `/v2/echo/status/${b2}`)).body;
    expect(queued).toMatchObject({ status: 'IN_QUEUE', waitingFor: 'batch_lane' });

    // The interactive worker is free again with a batch job queued: it does not take it.
    inter.send({ type: 'job.complete', id: a1.id, attempt: a1.attempt, output: { ok: true } });
    await new Promise((r) => setTimeout(r, 300));
    expect((await call(t.server, 'GET', `/v2/echo/status/${b2}`)).body.status).toBe('IN_QUEUE');
    // A new /run still goes to it at once, ahead of nothing.
    const run2 = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: { n: 2 } } })).body.id as string;
    const a2 = await inter.next('job.assign');
    expect(a2.id).toBe(run2);
    // The lane worker's result frees it for the next batch job.
    lane.send({ type: 'job.complete', id: l1.id, attempt: l1.attempt, output: { ok: true } });
    expect((await lane.next('job.assign')).id).toBe(b2);
    expect(await t.server.workers.batchBacklog('echo')).toBe(0);
    await inter.close();
    await lane.close();
  });

  it('without a lane, batch jobs take the workers spare capacity (after interactive jobs)', async () => {
    const store = new MemoryStore();
    await using t = await listening({ store });
    const w = await ScriptedWorker.connect(t.url, { workerId: 'w-1' });
    await w.next('welcome');
    const [b1] = await releasedBatch(store, 'batch_b', 1);
    const run = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id as string;
    const a = await w.next('job.assign');
    expect(a.id).toBe(run);
    expect((await call(t.server, 'GET', `/v2/echo/status/${b1}`)).body.waitingFor).not.toBe('batch_lane');
    w.send({ type: 'job.complete', id: a.id, attempt: a.attempt, output: {} });
    expect((await w.next('job.assign')).id).toBe(b1);
    await w.close();
  });
});

describe('batchLaneViews', () => {
  const health = (inQueue: number, inProgress: number): HealthReply => ({
    jobs: { completed: 0, failed: 0, inProgress, inQueue, retried: 0 },
    workers: { idle: 0, initializing: 0, ready: 0, running: 0, throttled: 0, unhealthy: 0 },
  });

  it('splits /health between the loops, sums their expected counts, drops the lane loop wait reasons', async () => {
    const expected: [string, number][] = [];
    const reasons: unknown[] = [];
    const lanes: [string, string | undefined][] = [];
    const workers = {
      connected: () => [
        { workerId: 'ep-1', running: 1, draining: false },
        { workerId: 'ep-batch-1', running: 2, draining: false, lane: 'batch' },
      ],
      setExpected: (id: string, n: number) => expected.push([id, n]),
      setWaitReason: (_id: string, r: unknown) => reasons.push(r),
      setLane: (id: string, l: string | undefined) => lanes.push([id, l]),
      batchBacklog: async (id: string) => (id === 'ep' ? 5 : 0),
    } as unknown as WorkerControl;
    const server = { workers, health: async (id: string) => (id === 'ep' ? health(8, 3) : health(4, 1)) };
    const v = batchLaneViews(server, new Set(['ep']));
    v.batch.workers.setLane('ep-batch-1', 'batch');
    expect(lanes).toEqual([['ep-batch-1', 'batch']]); // passed through to the server
    expect((await v.interactive.health('ep')).jobs).toMatchObject({ inQueue: 3, inProgress: 1 });
    expect((await v.batch.health('ep')).jobs).toMatchObject({ inQueue: 5, inProgress: 2 });
    // An endpoint without a lane is seen as it is.
    expect((await v.interactive.health('other')).jobs).toMatchObject({ inQueue: 4, inProgress: 1 });
    v.interactive.workers.setExpected('ep', 1);
    v.batch.workers.setExpected('ep', 2);
    v.interactive.workers.setExpected('other', 3);
    expect(expected).toEqual([
      ['ep', 1],
      ['ep', 3],
      ['other', 3],
    ]);
    v.batch.workers.setWaitReason('ep', 'cold_start');
    v.interactive.workers.setWaitReason('ep', 'crash_loop');
    expect(reasons).toEqual(['crash_loop']);
    expect(
      batchLanePolicy(
        { id: 'ep', minWorkers: 2, maxWorkers: 4, idleTimeoutMs: 700, concurrency: 3 },
        { maxWorkers: 1 },
      ),
    ).toEqual({ id: 'ep', minWorkers: 0, maxWorkers: 1, idleTimeoutMs: 700, concurrency: 3 });
  });
});
