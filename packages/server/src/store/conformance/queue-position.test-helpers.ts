import { describe, expect, it } from 'vitest';
import { LOST, must, RETENTION, T0, useStore, type MakeStore } from './fixtures.test-helpers.js';

/** `queuePosition`: the queued jobs of the same endpoint ahead of a queued job, in claim order, up to a cap. */
export function queuePositionTests(makeStore: MakeStore): void {
  describe('queuePosition', () => {
    const ctx = useStore(makeStore);

    it('counts the jobs ahead in claim order, per endpoint, up to the cap', async () => {
      const { store } = ctx;
      if (!store.queuePosition) return expect(store.queuePosition).toBeUndefined();
      const [a, b, c] = [await ctx.add(), await ctx.add(), await ctx.add()];
      const other = await ctx.add({ endpointId: 'other' });
      expect(await store.queuePosition(a.id, 100)).toBe(0);
      expect(await store.queuePosition(b.id, 100)).toBe(1);
      expect(await store.queuePosition(c.id, 100)).toBe(2);
      expect(await store.queuePosition(other.id, 100)).toBe(0);
      expect(await store.queuePosition(c.id, 1)).toBe(1);
      // The head is claimed, a job ahead is cancelled: c moves up; the running job has no position.
      const first = must(await store.claim('ep', 'w1', T0 + 1_000));
      expect(first.id).toBe(a.id);
      expect(await store.queuePosition(a.id, 100)).toBeUndefined();
      expect(await store.queuePosition(c.id, 100)).toBe(1);
      await store.cancel(b.id, T0 + 2_000, RETENTION);
      expect(await store.queuePosition(c.id, 100)).toBe(0);
      expect(await store.queuePosition(b.id, 100)).toBeUndefined();
      expect(await store.queuePosition('no-such-job', 100)).toBeUndefined();
    });

    it('puts a requeued job at the end of the queue', async () => {
      const { store } = ctx;
      if (!store.queuePosition) return;
      const running = await ctx.start();
      const waiting = await ctx.add();
      await store.requeue(running.id, { ...LOST, attempt: running.attempt, now: T0 + 2_000, maxAttempts: 3 });
      expect(await store.queuePosition(waiting.id, 100)).toBe(0);
      expect(await store.queuePosition(running.id, 100)).toBe(1);
    });
  });
}
