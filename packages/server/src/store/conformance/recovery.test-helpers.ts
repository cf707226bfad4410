import { describe, expect, it } from 'vitest';
import { COMPLETE, HOUR, LOST, must, T0, useStore, type MakeStore } from './fixtures.test-helpers.js';

/** Conditional delete (what a sweep found due, not what changed since) and restart recovery. */
export function recoveryTests(makeStore: MakeStore): void {
  describe('conditional delete and recovery', () => {
    const ctx = useStore(makeStore);

    it('deletes on ttl only while the ttl deadline is the one the sweep saw', async () => {
      const job = await ctx.add({ expiresAt: T0 + HOUR });
      await ctx.store.setExpiry(job.id, T0 + 2 * HOUR); // a client extended the ttl after the sweep looked
      expect(await ctx.store.delete(job.id, { expiresAt: T0 + HOUR })).toBe(false);
      expect(await ctx.store.get(job.id)).toBeDefined();
      expect(await ctx.store.delete(job.id, { expiresAt: T0 + 2 * HOUR })).toBe(true);
      expect(await ctx.store.get(job.id)).toBeUndefined();
      expect(await ctx.store.queueDepth('ep')).toBe(0);
    });

    it('does not delete a job retried after its retention was found due', async () => {
      const failed = await ctx.end({ status: 'FAILED', error: 'x' });
      const retainUntil = must(failed.retainUntil);
      expect(must(await ctx.store.retry(failed.id, T0 + 3_000)).status).toBe('IN_QUEUE');
      expect(await ctx.store.delete(failed.id, { retainUntil })).toBe(false);
      expect((await ctx.store.get(failed.id))?.status).toBe('IN_QUEUE');
      expect((await ctx.store.counts('ep')).inQueue).toBe(1);
    });

    it('leases every running job on recover (a lease ending sooner is extended), and counts what it holds', async () => {
      const a = await ctx.start({}, 'w1');
      const b = await ctx.start({}, 'w2');
      await ctx.store.setLease(b.id, b.attempt, T0 + 5_000);
      await ctx.end(COMPLETE);
      await ctx.add();
      await ctx.add();
      expect(await ctx.store.recover(T0 + 60_000)).toEqual({ queued: 2, running: 2, endpoints: ['ep'] });
      expect((await ctx.store.get(a.id))?.leaseUntil).toBe(T0 + 60_000);
      // A lease ending sooner is extended: its worker could not come back while the control plane was down.
      expect((await ctx.store.get(b.id))?.leaseUntil).toBe(T0 + 60_000);
      const due = await ctx.store.due(T0 + 60_000, 10);
      expect(due.leaseExpired.map((j) => j.id).sort()).toEqual([a.id, b.id].sort());
      // the lease sweep sends them back with the attempt counted
      const back = must(
        await ctx.store.requeue(a.id, { ...LOST, attempt: a.attempt, now: T0 + 60_000, maxAttempts: 3 }),
      );
      expect(back.status).toBe('IN_QUEUE');
      expect(back.retries).toBe(1);
      await ctx.store.claim('ep', 'w3', T0 + 61_000); // the two queued before it
      await ctx.store.claim('ep', 'w3', T0 + 61_000);
      const again = must(await ctx.store.claim('ep', 'w3', T0 + 61_000));
      expect(again.id).toBe(a.id);
      expect(again.attempt).toBe(2);
    });

    it('gives running jobs the grace of the latest restart, not of the first of quick restarts in a row', async () => {
      const a = await ctx.start({}, 'w1');
      await ctx.store.recover(T0 + 20_000); // restart 1: the worker has not reconnected when the process dies again
      await ctx.store.recover(T0 + 27_000); // restart 2, 7 s later
      expect((await ctx.store.get(a.id))?.leaseUntil).toBe(T0 + 27_000);
      expect((await ctx.store.due(T0 + 20_000, 10)).leaseExpired).toEqual([]);
      expect((await ctx.store.due(T0 + 27_000, 10)).leaseExpired.map((j) => j.id)).toEqual([a.id]);
      await ctx.store.recover(T0 + 25_000); // a later lease is never shortened
      expect((await ctx.store.get(a.id))?.leaseUntil).toBe(T0 + 27_000);
    });

    it('stores a job that is terminal from the start (a refused input): counted, and deleted after its retention', async () => {
      const job = await ctx.add({
        status: 'FAILED',
        error: 'invalid_input: width',
        finishedAt: T0,
        retainUntil: T0 + 60_000,
      });
      expect((await ctx.store.counts('ep')).failed).toBe(1);
      expect((await ctx.store.due(T0 + 59_999, 10)).retained).toEqual([]);
      expect((await ctx.store.due(T0 + 60_000, 10)).retained.map((j) => j.id)).toEqual([job.id]);
    });

    it('keeps a lease a reconnecting worker can clear', async () => {
      const a = await ctx.start({}, 'w1');
      await ctx.store.recover(T0 + 60_000);
      expect(await ctx.store.setLease(a.id, a.attempt, null)).toBe(true);
      expect((await ctx.store.due(T0 + HOUR, 10)).leaseExpired).toEqual([]);
    });
  });
}
