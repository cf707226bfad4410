import { describe, expect, it } from 'vitest';
import type { JobRecord } from '../types.js';
import { DuplicateJobError } from '../../errors.js';
import {
  COMPLETE,
  FAIL,
  makeJob,
  LOST,
  must,
  RETENTION,
  T0,
  TIME_OUT,
  useStore,
  type MakeStore,
} from './fixtures.test-helpers.js';

/** Per-endpoint counts, and races between transitions that a store must resolve with one winner. */
export function countRaceTests(makeStore: MakeStore): void {
  describe('counts', () => {
    const ctx = useStore(makeStore);

    it('are zero for an unknown endpoint', async () => {
      expect(await ctx.store.counts('none')).toEqual({
        completed: 0,
        failed: 0,
        inProgress: 0,
        inQueue: 0,
        retried: 0,
      });
      expect(await ctx.store.queueDepth('none')).toBe(0);
    });

    it('track live queue and running counts and cumulative outcomes', async () => {
      const [a, b, c, d] = [await ctx.start(), await ctx.start(), await ctx.start(), await ctx.start()];
      const e = await ctx.add();
      await ctx.add({ endpointId: 'other' });
      expect(await ctx.store.counts('ep')).toEqual({ completed: 0, failed: 0, inProgress: 4, inQueue: 1, retried: 0 });
      await ctx.store.finish(a.id, 1, COMPLETE, T0 + 2_000, RETENTION);
      await ctx.store.finish(b.id, 1, FAIL, T0 + 2_000, RETENTION);
      await ctx.store.finish(c.id, 1, TIME_OUT, T0 + 2_000, RETENTION);
      await ctx.store.requeue(d.id, { ...LOST, attempt: 1, now: T0 + 2_000, maxAttempts: 3 });
      await ctx.store.retry(b.id, T0 + 3_000);
      expect(await ctx.store.counts('ep')).toEqual({ completed: 1, failed: 2, inProgress: 0, inQueue: 3, retried: 2 });
      expect(await ctx.store.queueDepth('ep')).toBe(3);
      await ctx.store.delete(a.id);
      await ctx.store.delete(c.id);
      await ctx.store.cancel(e.id, T0 + 4_000, RETENTION);
      expect(await ctx.store.counts('ep')).toEqual({ completed: 1, failed: 2, inProgress: 0, inQueue: 2, retried: 2 });
      const next = must(await ctx.store.claim('ep', 'w', T0 + 5_000));
      await ctx.store.requeue(next.id, {
        ...LOST,
        attempt: next.attempt,
        now: T0 + 6_000,
        maxAttempts: next.attempt,
        failError: 'lost again',
      });
      expect(await ctx.store.counts('ep')).toEqual({ completed: 1, failed: 3, inProgress: 0, inQueue: 1, retried: 2 });
      await ctx.store.purgeQueue('ep');
      expect(await ctx.store.counts('ep')).toEqual({ completed: 1, failed: 3, inProgress: 0, inQueue: 0, retried: 2 });
      expect(await ctx.store.counts('other')).toEqual({
        completed: 0,
        failed: 0,
        inProgress: 0,
        inQueue: 1,
        retried: 0,
      });
      expect(await ctx.store.queueDepth('ep')).toBe(0);
    });

    it('count a cancelled job neither as completed nor as failed', async () => {
      const running = await ctx.start();
      await ctx.store.cancel(running.id, T0 + 2_000, RETENTION);
      const queued = await ctx.add();
      await ctx.store.cancel(queued.id, T0 + 2_000, RETENTION);
      expect(await ctx.store.counts('ep')).toEqual({ completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 });
    });
  });

  describe('races', () => {
    const ctx = useStore(makeStore);

    it('of two inserts of one id (an Idempotency-Key), exactly one is stored; the other rejects with DuplicateJobError', async () => {
      const a = makeJob({ id: 'same-id', input: { from: 'a' } });
      const b = makeJob({ id: 'same-id', input: { from: 'b' } });
      const [ra, rb] = await Promise.allSettled([ctx.store.insert(a), ctx.store.insert(b)]);
      const failed = [ra, rb].filter((r) => r.status === 'rejected');
      expect(failed).toHaveLength(1);
      expect((failed[0] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateJobError);
      const stored = must(await ctx.store.get('same-id'));
      expect(stored.input).toEqual(ra.status === 'fulfilled' ? a.input : b.input);
      expect((await ctx.store.counts('ep')).inQueue).toBe(1);
    });

    it('refuses a late finish after cancel', async () => {
      const job = await ctx.start();
      await ctx.store.cancel(job.id, T0 + 2_000, RETENTION);
      for (const patch of [COMPLETE, FAIL, TIME_OUT])
        expect(await ctx.store.finish(job.id, 1, patch, T0 + 3_000, RETENTION)).toBeUndefined();
      const now = must(await ctx.store.get(job.id));
      expect(now.status).toBe('CANCELLED');
      expect(now.output).toBeUndefined();
    });

    it('refuses a late completion after a timeout', async () => {
      const job = await ctx.start();
      const [due] = (await ctx.store.due(job.executionDeadline ?? 0, 10)).timedOut;
      must(await ctx.store.finish(must(due).id, must(due).attempt, TIME_OUT, T0 + 61_000, RETENTION));
      await ctx.unchanged(job.id, async () => {
        expect(await ctx.store.finish(job.id, 1, COMPLETE, T0 + 62_000, RETENTION)).toBeUndefined();
        expect(
          await ctx.store.requeue(job.id, { ...LOST, attempt: 1, now: T0 + 62_000, maxAttempts: 3 }),
        ).toBeUndefined();
      });
      expect((await ctx.store.get(job.id))?.status).toBe('TIMED_OUT');
    });

    it('refuses results of an old attempt after requeue, before and after the job is taken again', async () => {
      const job = await ctx.start();
      must(await ctx.store.requeue(job.id, { ...LOST, attempt: 1, now: T0 + 2_000, maxAttempts: 3 }));
      expect(await ctx.store.finish(job.id, 1, COMPLETE, T0 + 2_500, RETENTION)).toBeUndefined();
      must(await ctx.store.claim('ep', 'w2', T0 + 3_000));
      await ctx.unchanged(job.id, async () => {
        expect(await ctx.store.finish(job.id, 1, COMPLETE, T0 + 3_500, RETENTION)).toBeUndefined();
        expect(await ctx.store.setProgress(job.id, 1, 'old')).toBe(false);
        expect(await ctx.store.appendStream(job.id, 1, 0, ['old'])).toBe(0);
        expect(await ctx.store.setLease(job.id, 1, T0 + 9_000)).toBe(false);
        expect(
          await ctx.store.requeue(job.id, { ...LOST, attempt: 1, now: T0 + 3_500, maxAttempts: 3 }),
        ).toBeUndefined();
      });
      expect(must(await ctx.store.finish(job.id, 2, COMPLETE, T0 + 4_000, RETENTION))).toMatchObject({
        status: 'COMPLETED',
        workerId: 'w2',
        attempt: 2,
      });
    });

    type Move = { name: string; status: string; run: (j: JobRecord) => Promise<unknown> };
    const moves = (): Move[] => [
      {
        name: 'complete',
        status: 'COMPLETED',
        run: (j) => ctx.store.finish(j.id, j.attempt, COMPLETE, T0 + 5_000, RETENTION),
      },
      { name: 'fail', status: 'FAILED', run: (j) => ctx.store.finish(j.id, j.attempt, FAIL, T0 + 5_000, RETENTION) },
      {
        name: 'time out',
        status: 'TIMED_OUT',
        run: (j) => ctx.store.finish(j.id, j.attempt, TIME_OUT, T0 + 5_000, RETENTION),
      },
      { name: 'cancel', status: 'CANCELLED', run: (j) => ctx.store.cancel(j.id, T0 + 5_000, RETENTION) },
      {
        name: 'requeue',
        status: 'IN_QUEUE',
        run: (j) => ctx.store.requeue(j.id, { ...LOST, attempt: j.attempt, now: T0 + 5_000, maxAttempts: 3 }),
      },
    ];

    it('lets exactly one of two competing transitions of a running job win (cancel after requeue still applies)', async () => {
      const all = moves();
      for (const x of all) {
        for (const y of all) {
          const job = await ctx.start();
          const [rx, ry] = await Promise.all([x.run(job), y.run(job)]);
          if (x.name !== y.name && [x.name, y.name].every((n) => n === 'cancel' || n === 'requeue')) {
            // cancel names no attempt, so it also applies to the requeued job: cancel always ends up winning.
            expect(x.name === 'cancel' ? rx : ry, `${x.name} vs ${y.name}`).toBeDefined();
            expect((await ctx.store.get(job.id))?.status).toBe('CANCELLED');
            continue;
          }
          const winners = [rx === undefined ? [] : [x], ry === undefined ? [] : [y]].flat();
          expect(winners, `${x.name} vs ${y.name}`).toHaveLength(1);
          expect((await ctx.store.get(job.id))?.status, `${x.name} vs ${y.name}`).toBe(must(winners[0]).status);
          if (must(winners[0]).status === 'IN_QUEUE') await ctx.store.purgeQueue('ep');
        }
      }
    });

    it('lets exactly one of two concurrent retries or cancels win', async () => {
      const failed = await ctx.end(FAIL);
      const retries = await Promise.all([
        ctx.store.retry(failed.id, T0 + 3_000),
        ctx.store.retry(failed.id, T0 + 3_000),
      ]);
      expect(retries.filter((r) => r !== undefined)).toHaveLength(1);
      expect((await ctx.store.get(failed.id))?.retries).toBe(1);
      expect(await ctx.store.queueDepth('ep')).toBe(1);
      const cancels = await Promise.all([
        ctx.store.cancel(failed.id, T0 + 4_000, RETENTION),
        ctx.store.cancel(failed.id, T0 + 4_000, RETENTION),
      ]);
      expect(cancels.filter((r) => r !== undefined)).toHaveLength(1);
      expect(await ctx.store.claim('ep', 'w', T0 + 5_000)).toBeUndefined();
    });
  });
}
