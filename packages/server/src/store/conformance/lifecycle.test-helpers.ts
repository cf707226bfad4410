import { describe, expect, it } from 'vitest';
import type { JobRecord } from '../types.js';
import {
  COMPLETE,
  FAIL,
  ids,
  makeJob,
  LOST,
  must,
  RETENTION,
  T0,
  TIME_OUT,
  useStore,
  type MakeStore,
} from './fixtures.test-helpers.js';

/** Insert and get, claim, finish and cancel: the main path of a job and the records each step returns. */
export function lifecycleTests(makeStore: MakeStore): void {
  describe('insert and get', () => {
    const ctx = useStore(makeStore);

    it('round-trips every field, optional ones included', async () => {
      const job = makeJob({
        endpointId: 'my-endpoint',
        input: { prompt: 'héllo ✓', nested: { list: [1, 2.5, null, true, 'x'], empty: {} }, n: -0.125 },
        webhook: 'https://example.org/hook?a=1',
        s3Config: {
          accessId: 'AK',
          accessSecret: 'SK',
          bucketName: 'b',
          endpointUrl: 'https://s3.example.org',
          objectPath: 'p/q',
        },
        executionTimeout: 5_000,
        lowPriority: true,
        sync: true,
        createdAt: T0 + 1,
        queuedAt: T0 + 2,
        expiresAt: T0 + 10_000,
      });
      await ctx.store.insert(job);
      expect(await ctx.store.get(job.id)).toEqual(job);
      expect(await ctx.store.get('no-such-job')).toBeUndefined();
    });

    it('records are snapshots: a later write changes neither the inserted object nor a record handed out', async () => {
      const job = makeJob({ input: { a: 1 } });
      const original = structuredClone(job);
      await ctx.store.insert(job);
      const got = must(await ctx.store.get(job.id));
      expect(got).toEqual(original);
      const claimed = must(await ctx.store.claim('ep', 'w1', T0));
      expect(claimed).toMatchObject({ status: 'IN_PROGRESS', attempt: 1, workerId: 'w1' });
      expect(job).toEqual(original); // the store copies on write (or keeps its own copy): callers' objects stay
      expect(got).toEqual(original);
      const finished = must(
        await ctx.store.finish(job.id, 1, { status: 'COMPLETED', output: { ok: true } }, T0 + 1, RETENTION),
      );
      expect(finished.status).toBe('COMPLETED');
      expect(claimed).toMatchObject({ status: 'IN_PROGRESS', attempt: 1, workerId: 'w1' });
      expect(claimed.executionDeadline).toBeDefined();
      expect(claimed.output).toBeUndefined();
      expect(must(await ctx.store.get(job.id))).toMatchObject({ status: 'COMPLETED', output: { ok: true } });
    });

    it('rejects a duplicate id and keeps the first job', async () => {
      const job = await ctx.add({ input: { first: true } });
      await expect(ctx.store.insert({ ...job, input: { second: true } })).rejects.toThrow();
      expect((await ctx.store.get(job.id))?.input).toEqual({ first: true });
      expect(await ctx.store.queueDepth('ep')).toBe(1);
    });

    it('returns from each transition the record that get returns afterwards', async () => {
      const job = await ctx.add();
      const claimed = must(await ctx.store.claim('ep', 'w1', T0 + 10));
      expect(await ctx.store.get(job.id)).toEqual(claimed);
      const failed = must(await ctx.store.finish(job.id, 1, FAIL, T0 + 20, RETENTION));
      expect(await ctx.store.get(job.id)).toEqual(failed);
      const retried = must(await ctx.store.retry(job.id, T0 + 30));
      expect(await ctx.store.get(job.id)).toEqual(retried);
      const { after } = must(await ctx.store.cancel(job.id, T0 + 40, RETENTION));
      expect(await ctx.store.get(job.id)).toEqual(after);
    });
  });

  describe('claim', () => {
    const ctx = useStore(makeStore);

    it('returns undefined on an empty or unknown queue', async () => {
      expect(await ctx.store.claim('ep', 'w1', T0)).toBeUndefined();
      await ctx.start();
      expect(await ctx.store.claim('ep', 'w1', T0)).toBeUndefined();
      expect(await ctx.store.claim('elsewhere', 'w1', T0)).toBeUndefined();
    });

    it('takes jobs in FIFO order per endpoint, endpoints independent', async () => {
      const a1 = await ctx.add({ endpointId: 'a' });
      const b1 = await ctx.add({ endpointId: 'b' });
      const a2 = await ctx.add({ endpointId: 'a' });
      const a3 = await ctx.add({ endpointId: 'a' });
      const b2 = await ctx.add({ endpointId: 'b' });
      expect((await ctx.store.claim('b', 'w', T0))?.id).toBe(b1.id);
      expect((await ctx.store.claim('a', 'w', T0))?.id).toBe(a1.id);
      expect((await ctx.store.claim('a', 'w', T0))?.id).toBe(a2.id);
      expect((await ctx.store.claim('b', 'w', T0))?.id).toBe(b2.id);
      expect(await ctx.store.claim('b', 'w', T0)).toBeUndefined();
      expect((await ctx.store.claim('a', 'w', T0))?.id).toBe(a3.id);
      expect(await ctx.store.claim('a', 'w', T0)).toBeUndefined();
    });

    it('marks the job IN_PROGRESS with attempt + 1, workerId, startedAt and executionDeadline', async () => {
      const job = await ctx.add({ executionTimeout: 45_000 });
      const now = T0 + 3_000;
      const claimed = must(await ctx.store.claim('ep', 'worker-7', now));
      expect(claimed).toMatchObject({
        id: job.id,
        status: 'IN_PROGRESS',
        attempt: 1,
        workerId: 'worker-7',
        startedAt: now,
        executionDeadline: now + 45_000,
      });
      expect(claimed).toMatchObject({ input: job.input, queuedAt: job.queuedAt, retries: 0 });
      expect(await ctx.store.get(job.id)).toEqual(claimed);
    });

    it('never hands out cancelled, deleted or purged jobs', async () => {
      const a = await ctx.add();
      const b = await ctx.add();
      const c = await ctx.add();
      const d = await ctx.add();
      await ctx.store.cancel(b.id, T0, RETENTION);
      await ctx.store.delete(c.id);
      expect((await ctx.store.claim('ep', 'w', T0))?.id).toBe(a.id);
      expect((await ctx.store.claim('ep', 'w', T0))?.id).toBe(d.id);
      expect(await ctx.store.claim('ep', 'w', T0)).toBeUndefined();
      await ctx.add();
      await ctx.add();
      await ctx.store.purgeQueue('ep');
      expect(await ctx.store.claim('ep', 'w', T0)).toBeUndefined();
      const e = await ctx.add();
      expect((await ctx.store.claim('ep', 'w', T0))?.id).toBe(e.id);
    });

    it('treats an id deleted and inserted again as a new job at the end of the queue', async () => {
      const a = await ctx.add({ expiresAt: T0 + 10_000 });
      const b = await ctx.add();
      await ctx.store.delete(a.id);
      const c = await ctx.add();
      const again = makeJob({ id: a.id, input: { second: true }, expiresAt: T0 + 50_000 });
      await ctx.store.insert(again);
      expect(await ctx.store.get(a.id)).toEqual(again);
      const order: string[] = [];
      for (let job = await ctx.store.claim('ep', 'w', T0); job; job = await ctx.store.claim('ep', 'w', T0))
        order.push(job.id);
      expect(order).toEqual([b.id, c.id, a.id]);
      expect((await ctx.store.get(a.id))?.input).toEqual({ second: true });
      expect((await ctx.store.due(T0 + 10_000, 100)).expired).toEqual([]);
    });

    it('gives one job to exactly one of two concurrent claimers', async () => {
      await ctx.add();
      const got = await Promise.all([ctx.store.claim('ep', 'w1', T0), ctx.store.claim('ep', 'w2', T0)]);
      expect(got.filter((r) => r !== undefined)).toHaveLength(1);
    });

    it('gives each job to exactly one of many concurrent claimers', async () => {
      const jobs = await Promise.all(Array.from({ length: 20 }, () => ctx.add()));
      const got = await Promise.all(Array.from({ length: 30 }, (_, i) => ctx.store.claim('ep', `w${i}`, T0)));
      const claimed = got.filter((r): r is JobRecord => r !== undefined);
      expect(ids(claimed)).toEqual(ids(jobs));
    });
  });

  describe('finish', () => {
    const ctx = useStore(makeStore);

    it.each([COMPLETE, FAIL, TIME_OUT])(
      'moves IN_PROGRESS to $status, sets finishedAt and retention',
      async (patch) => {
        const job = await ctx.start();
        const now = T0 + 9_000;
        const done = must(await ctx.store.finish(job.id, job.attempt, patch, now, RETENTION));
        expect(done).toMatchObject({
          status: patch.status,
          finishedAt: now,
          retainUntil: now + RETENTION.async,
          attempt: 1,
          workerId: 'w1',
        });
        if (patch.status === 'COMPLETED') {
          expect(done.output).toEqual(patch.output);
          expect(done.error).toBeUndefined();
        } else {
          expect(done.error).toBe(patch.error);
          expect(done.output).toBeUndefined();
        }
        expect(await ctx.store.get(job.id)).toEqual(done);
      },
    );

    it('keeps a /runsync job for the sync retention', async () => {
      const done = await ctx.end(COMPLETE, { sync: true }, T0 + 5_000);
      expect(done.retainUntil).toBe(T0 + 5_000 + RETENTION.sync);
    });

    it('refuses a wrong attempt and changes nothing', async () => {
      const job = await ctx.start();
      for (const attempt of [0, 2, -1]) {
        await ctx.unchanged(job.id, async () => {
          expect(await ctx.store.finish(job.id, attempt, COMPLETE, T0 + 5, RETENTION)).toBeUndefined();
        });
      }
    });

    it('refuses a job that is not IN_PROGRESS and changes nothing', async () => {
      const queued = await ctx.add({ endpointId: 'other' });
      const completed = await ctx.end(COMPLETE);
      const failed = await ctx.end(FAIL);
      const cancelled = await ctx.start();
      await ctx.store.cancel(cancelled.id, T0, RETENTION);
      for (const [id, attempt] of [
        [queued.id, 0],
        [queued.id, 1],
        [completed.id, 1],
        [failed.id, 1],
        [cancelled.id, 1],
      ] as const) {
        for (const patch of [COMPLETE, FAIL, TIME_OUT]) {
          await ctx.unchanged(id, async () => {
            expect(await ctx.store.finish(id, attempt, patch, T0 + 7_000, RETENTION)).toBeUndefined();
          });
        }
      }
      expect(await ctx.store.finish('no-such-job', 1, COMPLETE, T0, RETENTION)).toBeUndefined();
    });
  });

  describe('cancel', () => {
    const ctx = useStore(makeStore);

    it('cancels a queued job: before and after, and it is never claimed', async () => {
      const job = await ctx.add();
      const res = must(await ctx.store.cancel(job.id, T0 + 50, RETENTION));
      expect(res.before).toEqual(job);
      expect(res.after).toMatchObject({
        id: job.id,
        status: 'CANCELLED',
        finishedAt: T0 + 50,
        retainUntil: T0 + 50 + RETENTION.async,
      });
      expect(await ctx.store.get(job.id)).toEqual(res.after);
      expect(await ctx.store.claim('ep', 'w1', T0 + 60)).toBeUndefined();
      expect(await ctx.store.queueDepth('ep')).toBe(0);
    });

    it('cancels a running job; the attempt can then no longer finish, progress, stream, lease or requeue', async () => {
      const job = await ctx.start({ sync: true });
      const res = must(await ctx.store.cancel(job.id, T0 + 2_000, RETENTION));
      expect(res.before).toMatchObject({ status: 'IN_PROGRESS', attempt: 1, workerId: 'w1' });
      expect(res.after).toMatchObject({
        status: 'CANCELLED',
        finishedAt: T0 + 2_000,
        retainUntil: T0 + 2_000 + RETENTION.sync,
      });
      await ctx.unchanged(job.id, async () => {
        expect(await ctx.store.finish(job.id, 1, COMPLETE, T0 + 3_000, RETENTION)).toBeUndefined();
        expect(await ctx.store.finish(job.id, 1, FAIL, T0 + 3_000, RETENTION)).toBeUndefined();
        expect(await ctx.store.setProgress(job.id, 1, { pct: 50 })).toBe(false);
        expect(await ctx.store.appendStream(job.id, 1, 0, ['late'])).toBe(0);
        expect(await ctx.store.setLease(job.id, 1, T0 + 9_000)).toBe(false);
        expect(
          await ctx.store.requeue(job.id, { ...LOST, attempt: 1, now: T0 + 3_000, maxAttempts: 3 }),
        ).toBeUndefined();
        expect(await ctx.store.retry(job.id, T0 + 3_000)).toBeUndefined();
      });
      expect(await ctx.store.takeStream(job.id)).toEqual([]);
      expect(await ctx.store.runningOn('w1')).toEqual([]);
    });

    it('refuses terminal and unknown jobs', async () => {
      const terminal = [await ctx.end(COMPLETE), await ctx.end(FAIL), await ctx.end(TIME_OUT)];
      const cancelled = await ctx.add({ endpointId: 'other' });
      await ctx.store.cancel(cancelled.id, T0, RETENTION);
      for (const job of [...terminal, cancelled]) {
        await ctx.unchanged(job.id, async () => {
          expect(await ctx.store.cancel(job.id, T0 + 5_000, RETENTION)).toBeUndefined();
        });
      }
      expect(await ctx.store.cancel('no-such-job', T0, RETENTION)).toBeUndefined();
    });
  });
}
