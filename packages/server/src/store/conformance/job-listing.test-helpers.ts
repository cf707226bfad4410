import { describe, expect, it } from 'vitest';
import type { JobRecord } from '../types.js';
import { COMPLETE, RETENTION, T0, useStore, type MakeStore } from './fixtures.test-helpers.js';

/** `listJobs`: pages of an endpoint's jobs, newest first, after a key, filtered by state. */
export function jobListingTests(makeStore: MakeStore): void {
  describe('listJobs', () => {
    const ctx = useStore(makeStore);

    it('pages cover every job once, newest first (ties by id), per endpoint and state', async () => {
      const { store } = ctx;
      if (!store.listJobs) return expect(store.listJobs).toBeUndefined();
      const done = await ctx.start({ id: 'job-zz', createdAt: T0 - 10 });
      await store.finish(done.id, 1, COMPLETE, T0 + 2_000, RETENTION);
      const made: JobRecord[] = [];
      // Five jobs share one createdAt: the id breaks the tie.
      for (let i = 0; i < 12; i++)
        made.push(await ctx.add({ id: `job-${String(i).padStart(2, '0')}`, createdAt: T0 + Math.floor(i / 5) }));
      await ctx.add({ endpointId: 'other' });
      const want = [...made.map((j) => j.id).reverse(), 'job-zz'];
      const seen: string[] = [];
      let after: { createdAt: number; id: string } | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page = await store.listJobs('ep', { limit: 5, ...(after ? { after } : {}) });
        seen.push(...page.map((j) => j.id));
        if (page.length < 5) break;
        const last = page.at(-1)!;
        after = { createdAt: last.createdAt, id: last.id };
      }
      expect(seen).toEqual(want);
      const completed = await store.listJobs('ep', { limit: 50, statuses: ['COMPLETED'] });
      expect(completed.map((j) => j.id)).toEqual(['job-zz']);
      const queued = await store.listJobs('ep', { limit: 3, statuses: ['IN_QUEUE', 'CANCELLED'] });
      expect(queued.map((j) => j.id)).toEqual(['job-11', 'job-10', 'job-09']);
      expect(await store.listJobs('none', { limit: 5 })).toEqual([]);
    });
  });
}
