import { describe, expect, it } from 'vitest';
import { JOB_LOG_MAX_LINES, type JobLogLine } from '../types.js';
import { COMPLETE, HOUR, LOST, must, RETENTION, T0, useStore, type MakeStore } from './fixtures.test-helpers.js';

const line = (message: string, o: Partial<JobLogLine> = {}): JobLogLine => ({
  at: T0 + 1_500,
  level: 'info',
  message,
  workerId: 'w1',
  attempt: 1,
  ...o,
});

/** Per-job logs (`appendLogs`, `logs`) and the recent-jobs listing (`recent`). */
export function jobLogTests(makeStore: MakeStore): void {
  describe('job logs', () => {
    const ctx = useStore(makeStore);

    it('keeps lines in order with their fields, across attempts and after the job ends', async () => {
      const job = await ctx.start();
      expect(
        await ctx.store.appendLogs(job.id, [
          line('loading'),
          line('step', { level: 'debug', fields: { step: 1, nested: { a: [1, 2] } } }),
        ]),
      ).toBe(2);
      expect(await ctx.store.appendLogs(job.id, [line('oops', { level: 'warn' })])).toBe(1);
      must(await ctx.store.requeue(job.id, { ...LOST, attempt: job.attempt, now: T0 + 2_000, maxAttempts: 5 }));
      const again = must(await ctx.store.claim('ep', 'w2', T0 + 3_000));
      expect(
        await ctx.store.appendLogs(job.id, [
          line('second try', { workerId: 'w2', attempt: again.attempt, level: 'error' }),
        ]),
      ).toBe(1);
      must(await ctx.store.finish(job.id, again.attempt, COMPLETE, T0 + 4_000, RETENTION));
      const log = must(await ctx.store.logs(job.id));
      expect(log.dropped).toBe(0);
      expect(log.lines.map((l) => [l.message, l.level, l.workerId, l.attempt])).toEqual([
        ['loading', 'info', 'w1', 1],
        ['step', 'debug', 'w1', 1],
        ['oops', 'warn', 'w1', 1],
        ['second try', 'error', 'w2', 2],
      ]);
      expect(log.lines[1]!.fields).toEqual({ step: 1, nested: { a: [1, 2] } });
      expect(log.lines[0]!.fields).toBeUndefined();
      expect(log.lines[0]!.at).toBe(T0 + 1_500);
    });

    it('an existing job without lines has an empty log; an unknown job has none and takes none', async () => {
      const job = await ctx.add();
      expect(await ctx.store.logs(job.id)).toEqual({ lines: [], dropped: 0 });
      expect(await ctx.store.appendLogs('nope', [line('x')])).toBe(0);
      expect(await ctx.store.logs('nope')).toBeUndefined();
    });

    it(`keeps the first ${JOB_LOG_MAX_LINES} lines and counts the rest as dropped`, async () => {
      const job = await ctx.start();
      const batch = (from: number, n: number) => Array.from({ length: n }, (_, i) => line(`l${from + i}`));
      expect(await ctx.store.appendLogs(job.id, batch(0, JOB_LOG_MAX_LINES - 2))).toBe(JOB_LOG_MAX_LINES - 2);
      expect(await ctx.store.appendLogs(job.id, batch(JOB_LOG_MAX_LINES - 2, 5))).toBe(2);
      expect(await ctx.store.appendLogs(job.id, batch(JOB_LOG_MAX_LINES + 3, 4))).toBe(0);
      const log = must(await ctx.store.logs(job.id));
      expect(log.lines.length).toBe(JOB_LOG_MAX_LINES);
      expect(log.lines.at(-1)!.message).toBe(`l${JOB_LOG_MAX_LINES - 1}`);
      expect(log.dropped).toBe(7);
    });

    it('deleting the job (delete or purge) deletes its log; a new job with the same id starts empty', async () => {
      const a = await ctx.start();
      await ctx.store.appendLogs(a.id, [line('a')]);
      expect(await ctx.store.delete(a.id)).toBe(true);
      expect(await ctx.store.logs(a.id)).toBeUndefined();
      const b = await ctx.add({ endpointId: 'other' });
      await ctx.store.appendLogs(b.id, [line('b')]);
      expect(await ctx.store.purgeQueue('other')).toEqual([b.id]);
      expect(await ctx.store.logs(b.id)).toBeUndefined();
      await ctx.store.insert({ ...b, createdAt: T0 + HOUR });
      expect(await ctx.store.logs(b.id)).toEqual({ lines: [], dropped: 0 });
    });
  });

  describe('recent jobs', () => {
    const ctx = useStore(makeStore);

    it("lists an endpoint's jobs newest first, in any state, up to the limit", async () => {
      const done = await ctx.end(COMPLETE, { createdAt: T0 - 2_000 }); // claimed first: the queue must be empty
      const old = await ctx.add({ createdAt: T0 - 3_000 });
      const mid = await ctx.add({ createdAt: T0 - 1_000 });
      await ctx.add({ endpointId: 'elsewhere', createdAt: T0 + 5_000 });
      const newest = await ctx.add({ createdAt: T0 });
      const all = await ctx.store.recent('ep', 10);
      expect(all.map((j) => j.id)).toEqual([newest.id, mid.id, done.id, old.id]);
      expect(all[2]!.status).toBe('COMPLETED');
      expect((await ctx.store.recent('ep', 2)).map((j) => j.id)).toEqual([newest.id, mid.id]);
      expect(await ctx.store.recent('ep', 0)).toEqual([]);
      expect(await ctx.store.recent('none', 5)).toEqual([]);
      await ctx.store.delete(mid.id);
      expect((await ctx.store.recent('ep', 10)).map((j) => j.id)).toEqual([newest.id, done.id, old.id]);
    });
  });
}
