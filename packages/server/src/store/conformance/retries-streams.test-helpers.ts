import { describe, expect, it } from 'vitest';
import {
  COMPLETE,
  FAIL,
  LOST,
  must,
  RETENTION,
  T0,
  TIME_OUT,
  useStore,
  type MakeStore,
} from './fixtures.test-helpers.js';

/** Retry and requeue (new attempts of a job), and the progress and stream that belong to one attempt. */
export function retryStreamTests(makeStore: MakeStore): void {
  describe('retry', () => {
    const ctx = useStore(makeStore);

    it.each([FAIL, TIME_OUT])(
      'requeues a $status job with output, error, progress and workerId cleared',
      async (patch) => {
        const job = await ctx.start({ queuedAt: T0 });
        await ctx.store.setProgress(job.id, 1, { pct: 90 });
        await ctx.store.finish(job.id, 1, patch, T0 + 2_000, RETENTION);
        const retried = must(await ctx.store.retry(job.id, T0 + 3_000));
        expect(retried).toMatchObject({
          id: job.id,
          status: 'IN_QUEUE',
          retries: 1,
          queuedAt: T0 + 3_000,
          input: job.input,
          attempt: 1,
        });
        for (const k of ['output', 'error', 'progress', 'workerId'] as const) expect(retried[k]).toBeUndefined();
        expect(await ctx.store.get(job.id)).toEqual(retried);
        const again = must(await ctx.store.claim('ep', 'w2', T0 + 4_000));
        expect(again).toMatchObject({
          id: job.id,
          attempt: 2,
          workerId: 'w2',
          startedAt: T0 + 4_000,
          executionDeadline: T0 + 4_000 + job.executionTimeout,
        });
        expect(again.progress).toBeUndefined();
      },
    );

    it('puts the job at the end of the queue', async () => {
      const a = await ctx.start();
      await ctx.store.finish(a.id, 1, FAIL, T0 + 2_000, RETENTION);
      const b = await ctx.add();
      const c = await ctx.add();
      await ctx.store.retry(a.id, T0 + 3_000);
      const order: string[] = [];
      for (let i = 0; i < 3; i++) order.push(must(await ctx.store.claim('ep', 'w', T0 + 4_000)).id);
      expect(order).toEqual([b.id, c.id, a.id]);
    });

    it('counts attempts and retries up across several rounds', async () => {
      const job = await ctx.start();
      for (let round = 1; round <= 3; round++) {
        const t = T0 + round * 10_000;
        must(await ctx.store.finish(job.id, round, round % 2 ? FAIL : TIME_OUT, t, RETENTION));
        expect(must(await ctx.store.retry(job.id, t + 1)).retries).toBe(round);
        expect(must(await ctx.store.claim('ep', 'w', t + 2)).attempt).toBe(round + 1);
      }
    });

    it('refuses queued, running, completed, cancelled and unknown jobs', async () => {
      const queued = await ctx.add({ endpointId: 'other' });
      const running = await ctx.start();
      const completed = await ctx.end(COMPLETE);
      const cancelled = await ctx.add({ endpointId: 'third' });
      await ctx.store.cancel(cancelled.id, T0, RETENTION);
      for (const job of [queued, running, completed, cancelled]) {
        await ctx.unchanged(job.id, async () => {
          expect(await ctx.store.retry(job.id, T0 + 5_000)).toBeUndefined();
        });
      }
      expect(await ctx.store.retry('no-such-job', T0)).toBeUndefined();
    });
  });

  describe('requeue', () => {
    const ctx = useStore(makeStore);

    it('puts a running attempt back in the queue with retries + 1', async () => {
      const job = await ctx.start();
      await ctx.store.setProgress(job.id, 1, 'half');
      const back = must(
        await ctx.store.requeue(job.id, {
          ...LOST,
          attempt: 1,
          now: T0 + 2_000,
          maxAttempts: 3,
        }),
      );
      expect(back).toMatchObject({ status: 'IN_QUEUE', retries: 1, attempt: 1 });
      expect(back.workerId).toBeUndefined();
      expect(back.progress).toBeUndefined();
      expect(back.error).toBeUndefined();
      expect(await ctx.store.get(job.id)).toEqual(back);
      expect(await ctx.store.runningOn('w1')).toEqual([]);
      const again = must(await ctx.store.claim('ep', 'w2', T0 + 3_000));
      expect(again).toMatchObject({
        id: job.id,
        attempt: 2,
        workerId: 'w2',
        executionDeadline: T0 + 3_000 + job.executionTimeout,
      });
      expect(again.progress).toBeUndefined();
    });

    it('fails the job with the given error once the attempt reaches maxAttempts', async () => {
      const job = await ctx.start();
      must(
        await ctx.store.requeue(job.id, {
          ...LOST,
          attempt: 1,
          now: T0 + 2_000,
          maxAttempts: 2,
        }),
      );
      must(await ctx.store.claim('ep', 'w2', T0 + 3_000));
      const failed = must(
        await ctx.store.requeue(job.id, {
          ...LOST,
          attempt: 2,
          now: T0 + 4_000,
          maxAttempts: 2,
          failError: 'worker lost twice',
        }),
      );
      expect(failed).toMatchObject({
        status: 'FAILED',
        error: 'worker lost twice',
        retries: 1,
        finishedAt: T0 + 4_000,
        retainUntil: T0 + 4_000 + RETENTION.async,
      });
      expect(await ctx.store.claim('ep', 'w3', T0 + 5_000)).toBeUndefined();
      expect(must(await ctx.store.retry(job.id, T0 + 6_000)).retries).toBe(2);
    });

    it('refuses a stale attempt or a job that is not running', async () => {
      const job = await ctx.start();
      await ctx.unchanged(job.id, async () => {
        expect(
          await ctx.store.requeue(job.id, { ...LOST, attempt: 2, now: T0 + 2_000, maxAttempts: 3 }),
        ).toBeUndefined();
        expect(
          await ctx.store.requeue(job.id, { ...LOST, attempt: 0, now: T0 + 2_000, maxAttempts: 3 }),
        ).toBeUndefined();
      });
      const queued = await ctx.add({ endpointId: 'other' });
      const done = await ctx.end(COMPLETE, { endpointId: 'third' });
      for (const j of [queued, done]) {
        await ctx.unchanged(j.id, async () => {
          expect(
            await ctx.store.requeue(j.id, {
              ...LOST,
              attempt: j.attempt,
              now: T0 + 2_000,
              maxAttempts: 3,
            }),
          ).toBeUndefined();
          expect(
            await ctx.store.requeue(j.id, { ...LOST, attempt: 1, now: T0 + 2_000, maxAttempts: 1 }),
          ).toBeUndefined();
        });
      }
      expect(await ctx.store.requeue('no-such-job', { ...LOST, attempt: 1, now: T0, maxAttempts: 3 })).toBeUndefined();
    });
  });

  describe('progress and stream', () => {
    const ctx = useStore(makeStore);

    it('keeps the latest progress of the current attempt only', async () => {
      const job = await ctx.start();
      expect(await ctx.store.setProgress(job.id, 1, { pct: 10 })).toBe(true);
      expect(await ctx.store.setProgress(job.id, 1, { pct: 20 })).toBe(true);
      expect((await ctx.store.get(job.id))?.progress).toEqual({ pct: 20 });
      await ctx.unchanged(job.id, async () => {
        expect(await ctx.store.setProgress(job.id, 2, { pct: 99 })).toBe(false);
        expect(await ctx.store.setProgress(job.id, 0, { pct: 99 })).toBe(false);
      });
      const queued = await ctx.add({ endpointId: 'other' });
      expect(await ctx.store.setProgress(queued.id, 0, 1)).toBe(false);
      expect(await ctx.store.setProgress(queued.id, 1, 1)).toBe(false);
      await ctx.store.finish(job.id, 1, COMPLETE, T0 + 2_000, RETENTION);
      await ctx.unchanged(job.id, async () => {
        expect(await ctx.store.setProgress(job.id, 1, { pct: 100 })).toBe(false);
      });
      expect(await ctx.store.setProgress('no-such-job', 1, 1)).toBe(false);
    });

    it('appends by seq, skips re-sent chunks, refuses gaps, and takeStream consumes in order', async () => {
      const job = await ctx.start();
      expect(await ctx.store.takeStream(job.id)).toEqual([]);
      expect(await ctx.store.appendStream(job.id, 1, 0, ['a', 'b'])).toBe(2);
      expect(await ctx.store.appendStream(job.id, 1, 2, [{ c: 3 }])).toBe(1);
      expect(await ctx.store.takeStream(job.id)).toEqual(['a', 'b', { c: 3 }]);
      expect(await ctx.store.takeStream(job.id)).toEqual([]);
      expect(await ctx.store.appendStream(job.id, 1, 1, ['b', { c: 3 }, 'd'])).toBe(1);
      expect(await ctx.store.appendStream(job.id, 1, 0, ['a', 'b'])).toBe(0);
      expect(await ctx.store.appendStream(job.id, 1, 6, ['g'])).toBe(0);
      expect(await ctx.store.takeStream(job.id)).toEqual(['d']);
      expect(await ctx.store.appendStream(job.id, 1, 4, ['e', null, 7])).toBe(3);
      expect(await ctx.store.appendStream(job.id, 1, 7, ['h'])).toBe(1);
      expect(await ctx.store.takeStream(job.id)).toEqual(['e', null, 7, 'h']);
    });

    it('claimStream (where implemented) marks a range delivered only right after what was taken, and only once', async () => {
      const { store } = ctx;
      if (!store.claimStream) return; // optional: readers of this store always read chunks back
      const job = await ctx.start();
      expect(await store.appendStream(job.id, 1, 0, ['a', 'b'])).toBe(2);
      expect(await store.claimStream(job.id, 1, 1, 2)).toBe(false); // 'a' was not delivered yet
      expect(await store.claimStream(job.id, 1, 0, 3)).toBe(false); // past what was appended
      expect(await store.claimStream(job.id, 1, 0, 2)).toBe(true);
      expect(await store.claimStream(job.id, 1, 0, 2)).toBe(false); // a second reader of the same event
      expect(await store.takeStream(job.id)).toEqual([]);
      expect(await store.appendStream(job.id, 1, 2, ['c', 'd'])).toBe(2);
      expect(await store.takeStream(job.id)).toEqual(['c', 'd']);
      expect(await store.claimStream(job.id, 1, 2, 4)).toBe(false); // taken by the read
      expect(await store.appendStream(job.id, 1, 4, ['e'])).toBe(1);
      expect(await store.claimStream(job.id, 2, 4, 5)).toBe(false); // another attempt's chunks
      expect(await store.claimStream(job.id, 1, 4, 5)).toBe(true);
      expect(await store.claimStream('no-such-job', 1, 0, 1)).toBe(false);
    });

    it('readStream reads chunks by position without taking them, from the first untaken one at the earliest', async () => {
      const { store } = ctx;
      const job = await ctx.start();
      expect(await store.readStream(job.id, 0)).toEqual({ attempt: 1, from: 0, chunks: [] });
      expect(await store.appendStream(job.id, 1, 0, ['a', { b: 2 }, null])).toBe(3);
      expect(await store.readStream(job.id, 0)).toEqual({ attempt: 1, from: 0, chunks: ['a', { b: 2 }, null] });
      expect(await store.readStream(job.id, 2)).toEqual({ attempt: 1, from: 2, chunks: [null] });
      expect(await store.readStream(job.id, 5)).toEqual({ attempt: 1, from: 5, chunks: [] });
      expect(await store.takeStream(job.id)).toEqual(['a', { b: 2 }, null]); // reading took nothing
      expect(await store.appendStream(job.id, 1, 3, ['d'])).toBe(1);
      expect(await store.readStream(job.id, 1)).toEqual({ attempt: 1, from: 3, chunks: ['d'] }); // 1..2 were taken
      expect(must(await store.finish(job.id, 1, COMPLETE, T0 + 5_000, RETENTION)).status).toBe('COMPLETED');
      expect(await store.readStream(job.id, 3)).toEqual({ attempt: 1, from: 3, chunks: ['d'] });
      expect(await store.readStream('no-such-job', 0)).toBeUndefined();
    });

    it('readStream follows the current attempt', async () => {
      const { store } = ctx;
      const job = await ctx.start();
      expect(await store.appendStream(job.id, 1, 0, ['a', 'b'])).toBe(2);
      await store.requeue(job.id, { ...LOST, attempt: 1, now: T0 + 2_000, maxAttempts: 3 });
      expect((await store.readStream(job.id, 2))?.chunks).toEqual([]);
      must(await store.claim(job.endpointId, 'w2', T0 + 3_000));
      expect(await store.appendStream(job.id, 2, 0, ['c'])).toBe(1);
      expect(await store.readStream(job.id, 0)).toEqual({ attempt: 2, from: 0, chunks: ['c'] });
    });

    it('accepts chunks of the current attempt only', async () => {
      const job = await ctx.start();
      expect(await ctx.store.appendStream(job.id, 2, 0, ['x'])).toBe(0);
      expect(await ctx.store.appendStream(job.id, 0, 0, ['x'])).toBe(0);
      const queued = await ctx.add({ endpointId: 'other' });
      expect(await ctx.store.appendStream(queued.id, 0, 0, ['x'])).toBe(0);
      expect(await ctx.store.appendStream('no-such-job', 1, 0, ['x'])).toBe(0);
      expect(await ctx.store.takeStream(job.id)).toEqual([]);
      expect(await ctx.store.takeStream(queued.id)).toEqual([]);
      expect(await ctx.store.takeStream('no-such-job')).toEqual([]);
    });

    it('still delivers chunks not yet read once the job is terminal', async () => {
      const job = await ctx.start();
      await ctx.store.appendStream(job.id, 1, 0, ['a']);
      expect(await ctx.store.takeStream(job.id)).toEqual(['a']);
      await ctx.store.appendStream(job.id, 1, 1, ['b', 'c']);
      await ctx.store.finish(job.id, 1, COMPLETE, T0 + 2_000, RETENTION);
      expect(await ctx.store.appendStream(job.id, 1, 3, ['late'])).toBe(0);
      expect(await ctx.store.takeStream(job.id)).toEqual(['b', 'c']);
      expect(await ctx.store.takeStream(job.id)).toEqual([]);
    });

    it('starts a fresh stream for a new attempt', async () => {
      const job = await ctx.start();
      await ctx.store.appendStream(job.id, 1, 0, ['a1', 'b1']);
      expect(await ctx.store.takeStream(job.id)).toEqual(['a1', 'b1']);
      await ctx.store.appendStream(job.id, 1, 2, ['c1']);
      must(await ctx.store.requeue(job.id, { ...LOST, attempt: 1, now: T0 + 2_000, maxAttempts: 3 }));
      must(await ctx.store.claim('ep', 'w2', T0 + 3_000));
      expect(await ctx.store.appendStream(job.id, 1, 3, ['stale'])).toBe(0);
      expect(await ctx.store.appendStream(job.id, 2, 0, ['a2'])).toBe(1);
      expect(await ctx.store.appendStream(job.id, 2, 1, ['b2'])).toBe(1);
      expect(await ctx.store.takeStream(job.id)).toEqual(['a2', 'b2']);
    });

    it('starts a fresh stream after retry', async () => {
      const job = await ctx.start();
      await ctx.store.appendStream(job.id, 1, 0, ['a1', 'b1']);
      await ctx.store.finish(job.id, 1, FAIL, T0 + 2_000, RETENTION);
      await ctx.store.takeStream(job.id);
      await ctx.store.retry(job.id, T0 + 3_000);
      must(await ctx.store.claim('ep', 'w2', T0 + 4_000));
      expect(await ctx.store.appendStream(job.id, 2, 0, ['a2'])).toBe(1);
      expect(await ctx.store.takeStream(job.id)).toEqual(['a2']);
    });
  });
}
