import { describe, expect, it } from 'vitest';
import { BatchLimitError, type BatchRecord, type BatchStore, type BatchLimits } from '../batch-types.js';
import type { Store, WebhookDelivery } from '../types.js';
import {
  COMPLETE,
  FAIL,
  LOST,
  makeJob,
  must,
  RETENTION,
  T0,
  useStore,
  type MakeStore,
} from './fixtures.test-helpers.js';

const LIMITS: BatchLimits = { maxQueued: 1000, maxOpen: 10 };
let n = 0;

/** A new DRAFT batch record on `ep` (ids unique per process, in creation order). */
function newBatch(o: Partial<BatchRecord> = {}): BatchRecord {
  n++;
  return {
    id: `batch_${String(n).padStart(6, '0')}`,
    endpointId: 'ep',
    status: 'DRAFT',
    createdAt: T0 + n,
    total: 0,
    ...o,
  };
}

/** `k` new jobs for a batch: ids in order. */
const jobs = (k: number, endpointId = 'ep') => Array.from({ length: k }, () => makeJob({ endpointId }));

const sum = (c: Awaited<ReturnType<BatchStore['batchCounts']>>) =>
  c.queued + c.inProgress + c.completed + c.failed + c.cancelled;

/** Drains a batch's held jobs into the queue, `chunk` at a time; returns the release sizes. */
async function releaseAll(b: BatchStore, id: string, chunk: number): Promise<number[]> {
  const sizes: number[] = [];
  for (;;) {
    const k = await b.releaseBatch(id, chunk);
    if (k === 0) return sizes;
    sizes.push(k);
  }
}

/** Batch Jobs (`store/batch-types.ts`): held jobs, release behind interactive jobs, pages, cancel, end, limits. */
export function batchTests(makeStore: MakeStore): void {
  describe('batches', () => {
    const ctx = useStore(makeStore);
    const bs = (store: Store): BatchStore => must(store.batches, 'a batch store');

    it('holds a DRAFT batch: its jobs cannot be claimed and are not counted as queued', async () => {
      const { store } = ctx;
      const b = bs(store);
      const batch = newBatch();
      const js = jobs(3);
      await b.createBatch(batch, js, LIMITS);
      expect(await b.getBatch(batch.id)).toMatchObject({ id: batch.id, status: 'DRAFT', total: 3 });
      expect(await store.claim('ep', 'w1', T0 + 10)).toBeUndefined();
      expect((await store.counts('ep')).inQueue).toBe(0);
      expect(await store.queueDepth('ep')).toBe(0);
      if (store.surelyEmpty) expect(store.surelyEmpty('ep')).toBe(true);
      expect(await store.get(js[0]!.id)).toMatchObject({ status: 'IN_QUEUE', batchId: batch.id });
      expect(await b.batchCounts(batch.id)).toEqual({
        queued: 3,
        inProgress: 0,
        completed: 0,
        failed: 0,
        cancelled: 0,
      });
      // A held job is removed with its batch's DELETE, not cancelled one by one.
      expect(await store.cancel(js[0]!.id, T0 + 20, RETENTION)).toBeUndefined();
      expect(await store.purgeQueue('ep')).toEqual([]);
      expect(await b.batchLive(batch.id)).toBe(true);
    });

    it('adds and removes requests while DRAFT, and refuses both once FINALIZED', async () => {
      const b = bs(ctx.store);
      const batch = newBatch();
      await b.createBatch(batch, [], LIMITS);
      const js = jobs(4);
      expect(await b.addToBatch(batch.id, js.slice(0, 3), LIMITS)).toMatchObject({ total: 3 });
      expect(await b.addToBatch(batch.id, js.slice(3), LIMITS)).toMatchObject({ total: 4 });
      expect(await b.removeFromBatch(batch.id, js[1]!.id)).toBe(true);
      expect(await b.removeFromBatch(batch.id, js[1]!.id)).toBe(false);
      expect(await ctx.store.get(js[1]!.id)).toBeUndefined();
      expect(await b.addToBatch('batch_none', jobs(1), LIMITS)).toBeUndefined();
      const other = await ctx.add();
      expect(await b.removeFromBatch(batch.id, other.id)).toBe(false); // not a job of the batch
      expect(await b.finalizeBatch(batch.id, T0 + 50)).toMatchObject({ status: 'FINALIZED', finalizedAt: T0 + 50 });
      expect(await b.finalizeBatch(batch.id, T0 + 60)).toBeUndefined();
      expect(await b.addToBatch(batch.id, jobs(1), LIMITS)).toBe('not_draft');
      expect(await b.removeFromBatch(batch.id, js[0]!.id)).toBe('not_draft');
      expect(await b.getBatch(batch.id)).toMatchObject({ total: 3 });
      expect(await b.renameBatch(batch.id, 'nightly')).toMatchObject({ name: 'nightly' });
      expect((await b.renameBatch(batch.id, undefined))?.name).toBeUndefined();
    });

    it('releases in chunks, and claims batch jobs after every interactive job, FIFO among themselves', async () => {
      const { store } = ctx;
      const b = bs(store);
      const batch = newBatch();
      const js = jobs(5);
      await b.createBatch(batch, js, LIMITS);
      await b.finalizeBatch(batch.id, T0 + 10);
      expect(await releaseAll(b, batch.id, 2)).toEqual([2, 2, 1]);
      expect((await store.counts('ep')).inQueue).toBe(5);
      if (store.surelyEmpty) expect(store.surelyEmpty('ep')).toBe(false);
      // Interactive jobs submitted after the batch was released still go first.
      const first = await ctx.add();
      const second = await ctx.add();
      const order: string[] = [];
      for (let i = 0; i < 7; i++) order.push(must(await store.claim('ep', 'w1', T0 + 100 + i)).id);
      expect(order).toEqual([first.id, second.id, ...js.map((j) => j.id)]);
      expect(await store.claim('ep', 'w1', T0 + 200)).toBeUndefined();
    });

    it('keeps a requeued or retried batch job behind the interactive queue, and out of the retention sweep', async () => {
      const { store } = ctx;
      const b = bs(store);
      const batch = newBatch();
      const [j1, j2] = jobs(2);
      await b.createBatch(batch, [j1!, j2!], LIMITS);
      await b.finalizeBatch(batch.id, T0 + 10);
      await releaseAll(b, batch.id, 10);
      const a = must(await store.claim('ep', 'w1', T0 + 20));
      const c = must(await store.claim('ep', 'w1', T0 + 20));
      const inter = await ctx.add();
      await store.requeue(a.id, { ...LOST, attempt: a.attempt, now: T0 + 30, maxAttempts: 3 });
      expect(must(await store.claim('ep', 'w1', T0 + 40)).id).toBe(inter.id);
      expect(must(await store.claim('ep', 'w1', T0 + 40)).id).toBe(a.id);
      const failed = must(await store.finish(c.id, c.attempt, FAIL, T0 + 50, RETENTION));
      expect(failed.batchId).toBe(batch.id);
      const inter2 = await ctx.add();
      await store.retry(c.id, T0 + 60);
      expect(must(await store.claim('ep', 'w1', T0 + 70)).id).toBe(inter2.id);
      const again = must(await store.claim('ep', 'w1', T0 + 70));
      expect(again).toMatchObject({ id: c.id, batchId: batch.id });
      await store.finish(again.id, again.attempt, COMPLETE, T0 + 80, RETENTION);
      const due = await store.due(T0 + 80 + RETENTION.async + 1, 100);
      expect(due.retained.map((j) => j.id)).not.toContain(c.id);
    });

    it('pages through a batch in id order, every job exactly once', async () => {
      const b = bs(ctx.store);
      const batch = newBatch();
      const js = jobs(23);
      await b.createBatch(batch, js.slice(0, 10), LIMITS);
      await b.addToBatch(batch.id, js.slice(10), LIMITS);
      await b.createBatch(newBatch(), jobs(4), LIMITS); // another batch's jobs stay out
      const seen: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await b.batchJobs(batch.id, { limit: 5, ...(after ? { after } : {}) });
        if (page.length === 0) break;
        seen.push(...page.map((j) => j.id));
        after = page.at(-1)!.id;
      }
      expect(seen).toEqual(js.map((j) => j.id).sort());
    });

    it('cancels: queued and held jobs at once, running ones left to the caller; counts always add up', async () => {
      const { store } = ctx;
      const b = bs(store);
      const batch = newBatch();
      await b.createBatch(batch, jobs(6), LIMITS);
      await b.finalizeBatch(batch.id, T0 + 10);
      await b.releaseBatch(batch.id, 4); // 4 queued, 2 still held
      const running = must(await store.claim('ep', 'w1', T0 + 20));
      const done = must(await store.claim('ep', 'w1', T0 + 20));
      await store.finish(done.id, done.attempt, COMPLETE, T0 + 30, RETENTION);
      expect(await b.batchCounts(batch.id)).toEqual({
        queued: 4,
        inProgress: 1,
        completed: 1,
        failed: 0,
        cancelled: 0,
      });
      expect(await b.cancelBatch(batch.id)).toMatchObject({ status: 'CANCELLED' });
      expect(await b.cancelBatch(batch.id)).toBeUndefined(); // cancelled already
      const first = await b.cancelBatchJobs(batch.id, T0 + 40, RETENTION, 3);
      const rest = await b.cancelBatchJobs(batch.id, T0 + 40, RETENTION, 3);
      expect(first).toHaveLength(3);
      expect(rest).toHaveLength(1);
      expect(await b.cancelBatchJobs(batch.id, T0 + 40, RETENTION, 3)).toEqual([]);
      const c = await b.batchCounts(batch.id);
      expect(c).toEqual({ queued: 0, inProgress: 1, completed: 1, failed: 0, cancelled: 4 });
      expect(sum(c)).toBe(6);
      expect((await store.counts('ep')).inQueue).toBe(0);
      expect(await store.claim('ep', 'w1', T0 + 50)).toBeUndefined();
      expect((await b.runningBatchJobs(batch.id, 10)).map((j) => j.id)).toEqual([running.id]);
      expect(await b.batchLive(batch.id)).toBe(true);
      await store.cancel(running.id, T0 + 60, RETENTION);
      expect(await b.batchLive(batch.id)).toBe(false);
    });

    it('ends a batch once, with its webhook delivery in the same write', async () => {
      const { store } = ctx;
      const b = bs(store);
      const batch = newBatch({ webhook: 'http://hooks.example/b' });
      await b.createBatch(batch, jobs(1), LIMITS);
      expect(await b.unendedBatches(10)).toEqual([]); // a DRAFT is not the sweep's
      await b.finalizeBatch(batch.id, T0 + 10);
      expect((await b.unendedBatches(10)).map((x) => x.id)).toEqual([batch.id]);
      const d: WebhookDelivery = {
        id: `msg_${batch.id}_batch`,
        jobId: batch.id,
        endpointId: 'ep',
        url: 'http://hooks.example/b',
        body: '{}',
        createdAt: T0 + 20,
        nextAttemptAt: T0 + 20,
        attempts: [],
      };
      expect(await b.endBatch(batch.id, T0 + 20, 'FINALIZED', d)).toMatchObject({ finishedAt: T0 + 20 });
      expect(await b.endBatch(batch.id, T0 + 30, 'FAILED', d)).toBeUndefined();
      expect(await b.getBatch(batch.id)).toMatchObject({ status: 'FINALIZED', finishedAt: T0 + 20 });
      expect(await b.unendedBatches(10)).toEqual([]);
      expect(await b.endedBatches(T0 + 19, 10)).toEqual([]);
      expect((await b.endedBatches(T0 + 20, 10)).map((x) => x.id)).toEqual([batch.id]);
      expect((await store.claimWebhooks(T0 + 20, 10, T0 + 1_000)).map((x) => x.id)).toEqual([d.id]);
      expect(await b.cancelBatch(batch.id)).toBeUndefined(); // ended already
    });

    it('refuses what would pass the limits, writing nothing', async () => {
      const b = bs(ctx.store);
      const limits: BatchLimits = { maxQueued: 5, maxOpen: 2 };
      const one = newBatch();
      await b.createBatch(one, jobs(4), limits);
      await expect(b.addToBatch(one.id, jobs(2), limits)).rejects.toBeInstanceOf(BatchLimitError);
      expect(await b.getBatch(one.id)).toMatchObject({ total: 4 });
      expect(await b.batchCounts(one.id)).toMatchObject({ queued: 4 });
      await b.createBatch(newBatch(), jobs(1), limits);
      const third = newBatch();
      await expect(b.createBatch(third, [], limits)).rejects.toMatchObject({ limit: 'maxOpen' });
      expect(await b.getBatch(third.id)).toBeUndefined();
      // Other endpoints have limits of their own.
      await b.createBatch(newBatch({ endpointId: 'other' }), jobs(5, 'other'), limits);
    });

    it('lists newest first with a cursor, and deletes a batch with its jobs in chunks', async () => {
      const b = bs(ctx.store);
      const made = [newBatch(), newBatch(), newBatch()];
      for (const x of made) await b.createBatch(x, [], LIMITS);
      const page1 = await b.listBatches('ep', 2);
      expect(page1.map((x) => x.id)).toEqual([made[2]!.id, made[1]!.id]);
      const last = page1.at(-1)!;
      const page2 = await b.listBatches('ep', 2, { createdAt: last.createdAt, id: last.id });
      expect(page2.map((x) => x.id)).toEqual([made[0]!.id]);
      const big = newBatch();
      const js = jobs(5);
      await b.createBatch(big, js, LIMITS);
      expect(await b.deleteBatch(big.id, 2)).toBe(false);
      expect(await b.deleteBatch(big.id, 2)).toBe(false);
      expect(await b.deleteBatch(big.id, 2)).toBe(true);
      expect(await b.getBatch(big.id)).toBeUndefined();
      for (const j of js) expect(await ctx.store.get(j.id)).toBeUndefined();
    });
  });
}
