import { describe, expect, it } from 'vitest';
import type { BatchLimits, BatchStore } from '../batch-types.js';
import type { Store } from '../types.js';
import { LOST, makeJob, must, T0, useStore, type MakeStore } from './fixtures.test-helpers.js';

const LIMITS: BatchLimits = { maxQueued: 1000, maxOpen: 10 };
let n = 0;

/** A finalized, released batch of `k` jobs on `endpointId`; returns their ids in order. */
async function releasedBatch(b: BatchStore, k: number, endpointId = 'ep'): Promise<string[]> {
  n++;
  const id = `lane_batch_${String(n).padStart(6, '0')}`;
  const js = Array.from({ length: k }, () => makeJob({ endpointId }));
  await b.createBatch({ id, endpointId, status: 'DRAFT', createdAt: T0 + n, total: 0 }, js, LIMITS);
  await b.finalizeBatch(id, T0 + 10);
  while ((await b.releaseBatch(id, 100)) > 0);
  return js.map((j) => j.id);
}

/** The batch lane's claims (`ClaimLane`, issue #38): each lane takes its own jobs only, FIFO, held jobs never. */
export function batchLaneTests(makeStore: MakeStore): void {
  describe('batch lane claims', () => {
    const ctx = useStore(makeStore);
    const bs = (store: Store): BatchStore => must(store.batches, 'a batch store');

    it('a batch claim takes released batch jobs only, an interactive claim jobs of no batch only', async () => {
      const { store } = ctx;
      const b = bs(store);
      const inter1 = await ctx.add();
      const batchIds = await releasedBatch(b, 3);
      const inter2 = await ctx.add();
      // A DRAFT batch's held jobs are taken by no lane.
      n++;
      const held = makeJob();
      await b.createBatch(
        { id: `lane_held_${n}`, endpointId: 'ep', status: 'DRAFT', createdAt: T0, total: 0 },
        [held],
        LIMITS,
      );
      expect(await store.batchBacklog('ep')).toBe(3);
      const lane1 = must(await store.claim('ep', 'lane-1', T0 + 20, 'batch'));
      expect(lane1).toMatchObject({ id: batchIds[0], status: 'IN_PROGRESS', workerId: 'lane-1' });
      expect(await store.batchBacklog('ep')).toBe(2);
      expect(must(await store.claim('ep', 'w1', T0 + 21, 'interactive')).id).toBe(inter1.id);
      expect(must(await store.claim('ep', 'lane-1', T0 + 22, 'batch')).id).toBe(batchIds[1]);
      expect(must(await store.claim('ep', 'w1', T0 + 23, 'interactive')).id).toBe(inter2.id);
      // Interactive queue empty: an interactive claim does not fall back to batch jobs.
      expect(await store.claim('ep', 'w1', T0 + 24, 'interactive')).toBeUndefined();
      expect(must(await store.claim('ep', 'lane-1', T0 + 25, 'batch')).id).toBe(batchIds[2]);
      expect(await store.claim('ep', 'lane-1', T0 + 26, 'batch')).toBeUndefined();
      expect(await store.batchBacklog('ep')).toBe(0);
      // The held job is still there, unclaimed by either lane and by a claim of no lane.
      expect(await store.claim('ep', 'w1', T0 + 27)).toBeUndefined();
      expect(await store.get(held.id)).toMatchObject({ status: 'IN_QUEUE' });
    });

    it('a batch claim with only interactive jobs queued finds none, and leaves them to the interactive lane', async () => {
      const { store } = ctx;
      const a = await ctx.add();
      expect(await store.claim('ep', 'lane-1', T0 + 20, 'batch')).toBeUndefined();
      expect(await store.get(a.id)).toMatchObject({ status: 'IN_QUEUE' });
      expect(must(await store.claim('ep', 'w1', T0 + 21, 'interactive')).id).toBe(a.id);
    });

    it('keeps lanes per endpoint, and a requeued batch job goes back to the batch lane', async () => {
      const { store } = ctx;
      const b = bs(store);
      const [x] = await releasedBatch(b, 1, 'other');
      const [y] = await releasedBatch(b, 1);
      expect(await store.batchBacklog('other')).toBe(1);
      const got = must(await store.claim('ep', 'lane-1', T0 + 20, 'batch'));
      expect(got.id).toBe(y);
      await store.requeue(got.id, { ...LOST, attempt: got.attempt, now: T0 + 30, maxAttempts: 3 });
      expect(await store.claim('ep', 'w1', T0 + 31, 'interactive')).toBeUndefined();
      expect(must(await store.claim('ep', 'lane-2', T0 + 32, 'batch')).id).toBe(y);
      expect(must(await store.claim('other', 'lane-9', T0 + 33, 'batch')).id).toBe(x);
    });
  });
}
