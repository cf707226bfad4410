import { describe, expect, it } from 'vitest';
import type { JobRecord } from '../types.js';
import {
  COMPLETE,
  FAIL,
  HOUR,
  ids,
  LOST,
  must,
  NOTHING_DUE,
  RETENTION,
  T0,
  TIME_OUT,
  useStore,
  type MakeStore,
} from './fixtures.test-helpers.js';

/** Leases, ttl expiry, purge and delete, and `due()`, which reports the jobs whose deadlines have passed. */
export function deadlineTests(makeStore: MakeStore): void {
  describe('leases, expiry, purge and delete', () => {
    const ctx = useStore(makeStore);

    it('sets and clears the lease of the running attempt only', async () => {
      const job = await ctx.start();
      expect(await ctx.store.setLease(job.id, 1, T0 + 30_000)).toBe(true);
      expect((await ctx.store.get(job.id))?.leaseUntil).toBe(T0 + 30_000);
      expect(await ctx.store.setLease(job.id, 2, T0 + 40_000)).toBe(false);
      expect((await ctx.store.get(job.id))?.leaseUntil).toBe(T0 + 30_000);
      expect(await ctx.store.setLease(job.id, 1, null)).toBe(true);
      expect((await ctx.store.get(job.id))?.leaseUntil).toBeUndefined();
      const queued = await ctx.add({ endpointId: 'other' });
      expect(await ctx.store.setLease(queued.id, 0, T0)).toBe(false);
      expect(await ctx.store.setLease('no-such-job', 1, T0)).toBe(false);
    });

    it('lists the IN_PROGRESS jobs of a worker', async () => {
      const a = await ctx.start({}, 'w1');
      const b = await ctx.start({}, 'w2');
      const c = await ctx.start({}, 'w1');
      await ctx.add();
      expect(ids(await ctx.store.runningOn('w1'))).toEqual(ids([a, c]));
      expect(ids(await ctx.store.runningOn('w2'))).toEqual([b.id]);
      await ctx.store.finish(a.id, 1, COMPLETE, T0 + 2_000, RETENTION);
      await ctx.store.cancel(b.id, T0 + 2_000, RETENTION);
      expect(await ctx.store.runningOn('w1')).toEqual([must(await ctx.store.get(c.id))]);
      expect(await ctx.store.runningOn('w2')).toEqual([]);
      expect(await ctx.store.runningOn('nobody')).toEqual([]);
    });

    it('sets the ttl deadline', async () => {
      const job = await ctx.add();
      expect(await ctx.store.setExpiry(job.id, T0 + 77_000)).toBe(true);
      expect((await ctx.store.get(job.id))?.expiresAt).toBe(T0 + 77_000);
      expect(await ctx.store.setExpiry('no-such-job', T0)).toBe(false);
    });

    it('purges only the IN_QUEUE jobs of the endpoint and returns their ids', async () => {
      const running = await ctx.start({ endpointId: 'a' });
      const done = await ctx.end(COMPLETE, { endpointId: 'a' });
      const q1 = await ctx.add({ endpointId: 'a' });
      const q2 = await ctx.add({ endpointId: 'a' });
      const cancelled = await ctx.add({ endpointId: 'a' });
      await ctx.store.cancel(cancelled.id, T0, RETENTION);
      const other = await ctx.add({ endpointId: 'b' });
      expect((await ctx.store.purgeQueue('a')).sort()).toEqual(ids([q1, q2]));
      expect(await ctx.store.get(q1.id)).toBeUndefined();
      expect(await ctx.store.get(q2.id)).toBeUndefined();
      expect((await ctx.store.get(running.id))?.status).toBe('IN_PROGRESS');
      expect((await ctx.store.get(done.id))?.status).toBe('COMPLETED');
      expect((await ctx.store.get(cancelled.id))?.status).toBe('CANCELLED');
      expect(await ctx.store.queueDepth('a')).toBe(0);
      expect(await ctx.store.queueDepth('b')).toBe(1);
      expect((await ctx.store.claim('b', 'w', T0))?.id).toBe(other.id);
      expect(must(await ctx.store.finish(running.id, 1, COMPLETE, T0 + 3_000, RETENTION)).status).toBe('COMPLETED');
      expect(await ctx.store.purgeQueue('a')).toEqual([]);
      expect(await ctx.store.purgeQueue('unknown')).toEqual([]);
    });

    it('deletes a job in any state', async () => {
      const queued = await ctx.add();
      const running = await ctx.start({ endpointId: 'other' });
      const done = await ctx.end(FAIL, { endpointId: 'third' });
      for (const job of [queued, running, done]) {
        expect(await ctx.store.delete(job.id)).toBe(true);
        expect(await ctx.store.get(job.id)).toBeUndefined();
        expect(await ctx.store.delete(job.id)).toBe(false);
      }
      expect(await ctx.store.claim('ep', 'w', T0)).toBeUndefined();
      expect(await ctx.store.finish(running.id, 1, COMPLETE, T0, RETENTION)).toBeUndefined();
      expect(await ctx.store.retry(done.id, T0)).toBeUndefined();
      expect(await ctx.store.runningOn('w1')).toEqual([]);
      expect(await ctx.store.due(T0 + 30 * 24 * HOUR, 100)).toEqual(NOTHING_DUE);
    });
  });

  describe('due', () => {
    const ctx = useStore(makeStore);

    it('reports nothing before a deadline and each kind at its deadline', async () => {
      const ttl = await ctx.add({ endpointId: 'q', expiresAt: T0 + 50_000 });
      const running = await ctx.start({ executionTimeout: 20_000 }, 'w1', T0 + 1_000);
      const leased = await ctx.start({ executionTimeout: 90_000 }, 'w1', T0 + 1_000);
      await ctx.store.setLease(leased.id, 1, T0 + 15_000);
      const done = await ctx.end(COMPLETE, { endpointId: 'r', sync: true }, T0 + 2_000);
      expect(await ctx.store.due(T0 + 14_999, 100)).toEqual(NOTHING_DUE);
      expect(ids((await ctx.store.due(T0 + 15_000, 100)).leaseExpired)).toEqual([leased.id]);
      expect((await ctx.store.due(T0 + 20_999, 100)).timedOut).toEqual([]);
      const timedOut = (await ctx.store.due(T0 + 21_000, 100)).timedOut;
      expect(timedOut).toEqual([must(await ctx.store.get(running.id))]);
      expect(timedOut[0]).toMatchObject({ status: 'IN_PROGRESS', attempt: 1, workerId: 'w1' });
      expect((await ctx.store.due(T0 + 49_999, 100)).expired).toEqual([]);
      expect(ids((await ctx.store.due(T0 + 50_000, 100)).expired)).toEqual([ttl.id]);
      expect((await ctx.store.due(T0 + 2_000 + RETENTION.sync - 1, 100)).retained).toEqual([]);
      expect(ids((await ctx.store.due(T0 + 2_000 + RETENTION.sync, 100)).retained)).toEqual([done.id]);
    });

    it('reports ttl expiry in any state', async () => {
      const at = T0 + 100_000;
      const queued = await ctx.add({ expiresAt: at });
      const running = await ctx.start({ endpointId: 'b', expiresAt: at, executionTimeout: 10 * HOUR });
      const done = await ctx.end(COMPLETE, { endpointId: 'c', expiresAt: at }, T0 + 99_000);
      const cancelled = await ctx.add({ endpointId: 'd', expiresAt: at });
      await ctx.store.cancel(cancelled.id, T0 + 99_000, RETENTION);
      await ctx.add({ endpointId: 'e', expiresAt: at + 1 });
      const due = await ctx.store.due(at, 100);
      expect(ids(due.expired)).toEqual(ids([queued, running, done, cancelled]));
      expect(due.expired.find((r) => r.id === running.id)).toMatchObject({
        status: 'IN_PROGRESS',
        attempt: 1,
        workerId: 'w1',
      });
    });

    it('does not report a job finished, cancelled or requeued before its execution deadline', async () => {
      const a = await ctx.start({ executionTimeout: 10_000 });
      const b = await ctx.start({ executionTimeout: 10_000 });
      const c = await ctx.start({ executionTimeout: 10_000 });
      await ctx.store.finish(a.id, 1, COMPLETE, T0 + 2_000, RETENTION);
      await ctx.store.cancel(b.id, T0 + 2_000, RETENTION);
      await ctx.store.requeue(c.id, { ...LOST, attempt: 1, now: T0 + 2_000, maxAttempts: 3 });
      expect((await ctx.store.due(T0 + 20_000, 100)).timedOut).toEqual([]);
    });

    it('honours the new execution deadline of a later attempt, not the old one', async () => {
      const job = await ctx.start({ executionTimeout: 10_000 }, 'w1', T0);
      await ctx.store.finish(job.id, 1, FAIL, T0 + 1_000, RETENTION);
      await ctx.store.retry(job.id, T0 + 2_000);
      must(await ctx.store.claim('ep', 'w2', T0 + 5_000));
      expect((await ctx.store.due(T0 + 14_999, 100)).timedOut).toEqual([]);
      const due = await ctx.store.due(T0 + 15_000, 100);
      expect(due.timedOut).toHaveLength(1);
      expect(due.timedOut[0]).toMatchObject({ id: job.id, attempt: 2 });
    });

    it('does not report a cleared lease or the lease of an attempt that ended', async () => {
      const cleared = await ctx.start();
      const finished = await ctx.start();
      const requeued = await ctx.start();
      for (const j of [cleared, finished, requeued]) await ctx.store.setLease(j.id, 1, T0 + 5_000);
      await ctx.store.setLease(cleared.id, 1, null);
      await ctx.store.finish(finished.id, 1, FAIL, T0 + 2_000, RETENTION);
      await ctx.store.requeue(requeued.id, { ...LOST, attempt: 1, now: T0 + 2_000, maxAttempts: 3 });
      must(await ctx.store.claim('ep', 'w2', T0 + 3_000));
      expect((await ctx.store.due(T0 + 6_000, 100)).leaseExpired).toEqual([]);
    });

    it('honours an expiry moved later or earlier by setExpiry', async () => {
      const later = await ctx.add({ expiresAt: T0 + 10_000 });
      const earlier = await ctx.add({ expiresAt: T0 + 10_000 });
      await ctx.store.setExpiry(later.id, T0 + 20_000);
      await ctx.store.setExpiry(earlier.id, T0 + 5_000);
      expect(await ctx.store.due(T0 + 4_999, 100)).toEqual(NOTHING_DUE);
      expect(ids((await ctx.store.due(T0 + 10_000, 100)).expired)).toEqual([earlier.id]);
      await ctx.store.delete(earlier.id);
      expect((await ctx.store.due(T0 + 19_999, 100)).expired).toEqual([]);
      expect(ids((await ctx.store.due(T0 + 20_000, 100)).expired)).toEqual([later.id]);
    });

    it('reports a job once per kind even when its deadline was set twice to the same time', async () => {
      const job = await ctx.add({ expiresAt: T0 + 10_000 });
      await ctx.store.setExpiry(job.id, T0 + 10_000);
      await ctx.store.setExpiry(job.id, T0 + 10_000);
      expect(ids((await ctx.store.due(T0 + 10_000, 100)).expired)).toEqual([job.id]);
    });

    it('does not report retention of a job that was retried', async () => {
      const job = await ctx.end(FAIL, {}, T0 + 2_000);
      await ctx.store.retry(job.id, T0 + 3_000);
      expect((await ctx.store.due(T0 + 2_000 + RETENTION.async, 100)).retained).toEqual([]);
    });

    it('reports a due job again while nobody acted on it (a sweep that crashed loses nothing)', async () => {
      const expired = await ctx.add({ endpointId: 'x', expiresAt: T0 + 5_000 });
      const timedOut = await ctx.start({ executionTimeout: 5_000 });
      const leased = await ctx.start({ executionTimeout: 10 * HOUR });
      await ctx.store.setLease(leased.id, 1, T0 + 5_000);
      const retained = await ctx.end(COMPLETE, { endpointId: 'r' }, T0 + 2_000);
      const at = T0 + 2_000 + RETENTION.async;
      for (let i = 0; i < 2; i++) {
        const due = await ctx.store.due(at, 100);
        expect(ids(due.expired)).toEqual([expired.id]);
        expect(ids(due.timedOut)).toEqual([timedOut.id]);
        expect(ids(due.leaseExpired)).toEqual([leased.id]);
        expect(ids(due.retained)).toEqual([retained.id]);
      }
      await ctx.store.delete(expired.id);
      await ctx.store.finish(timedOut.id, 1, TIME_OUT, at, RETENTION);
      await ctx.store.requeue(leased.id, { ...LOST, attempt: 1, now: at, maxAttempts: 3 });
      await ctx.store.delete(retained.id);
      expect(await ctx.store.due(at, 100)).toEqual(NOTHING_DUE);
    });

    it('deleteRetained (where a store has it) deletes due jobs whose retention is unchanged, and nothing else', async () => {
      const a = await ctx.end(COMPLETE, { endpointId: 'r' }, T0 + 2_000);
      const b = await ctx.end(FAIL, { endpointId: 'r' }, T0 + 2_000);
      const retried = await ctx.end(FAIL, { endpointId: 'r' }, T0 + 2_000);
      const at = T0 + 2_000 + RETENTION.async;
      const due = (await ctx.store.due(at, 100)).retained;
      expect(ids(due)).toEqual(ids([a, b, retried]));
      if (!ctx.store.deleteRetained) return; // the sweep falls back to delete() with { retainUntil }
      await ctx.store.retry(retried.id, at);
      const gone = await ctx.store.deleteRetained(due.map((j) => ({ id: j.id, retainUntil: j.retainUntil! })));
      expect(gone.sort()).toEqual(ids([a, b]));
      expect(await ctx.store.get(a.id)).toBeUndefined();
      expect(await ctx.store.get(b.id)).toBeUndefined();
      expect((await ctx.store.get(retried.id))?.status).toBe('IN_QUEUE');
      expect(await ctx.store.deleteRetained([{ id: a.id, retainUntil: a.retainUntil! }])).toEqual([]);
      expect((await ctx.store.due(at, 100)).retained).toEqual([]);
    });

    it('respects limit per kind; the rest come with the next call once the first are handled', async () => {
      const at = T0 + 10_000;
      const jobs: JobRecord[] = [];
      for (let i = 0; i < 5; i++) jobs.push(await ctx.add({ endpointId: `e${i}`, expiresAt: at }));
      for (let i = 0; i < 3; i++) await ctx.start({ endpointId: `r${i}`, executionTimeout: 5_000 });
      const seen: string[] = [];
      for (const expected of [2, 2, 1, 0]) {
        const due = await ctx.store.due(at, 2);
        expect(due.expired).toHaveLength(expected);
        expect(due.timedOut.length).toBeLessThanOrEqual(2);
        for (const r of due.expired) {
          seen.push(r.id);
          expect(await ctx.store.delete(r.id)).toBe(true);
        }
        for (const r of due.timedOut) await ctx.store.finish(r.id, r.attempt, TIME_OUT, at, RETENTION);
      }
      expect(seen.sort()).toEqual(ids(jobs));
      expect((await ctx.store.due(at, 2)).timedOut).toEqual([]);
      expect(
        (await ctx.store.counts('r0')).failed +
          (await ctx.store.counts('r1')).failed +
          (await ctx.store.counts('r2')).failed,
      ).toBe(3);
    });
  });
}
