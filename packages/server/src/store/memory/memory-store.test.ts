import { describe, expect, it } from 'vitest';
import { MemoryStore } from './memory-store.js';
import { RETENTION, T0, makeJob, LOST, must, random } from '../conformance/fixtures.test-helpers.js';
import { runStoreConformance } from '../conformance/index.test-helpers.js';
import type { JobRecord } from '../types.js';

runStoreConformance('MemoryStore', () => new MemoryStore());

describe('MemoryStore at scale', () => {
  it('stays FIFO across 10k jobs with interleaved claims, cancels, deletes, requeues, retries and purges', async () => {
    const store = new MemoryStore();
    const rand = random(20261122);
    const pick = <T>(xs: T[]): T => must(xs[Math.floor(rand() * xs.length)]);
    const endpoints = ['a', 'b', 'c'];
    /** The expected queue of each endpoint, oldest first. */
    const model = new Map(endpoints.map((e) => [e, [] as string[]]));
    const running = new Map<string, JobRecord>();
    let inserted = 0;
    let now = T0;
    while (inserted < 10_000) {
      now++;
      const ep = pick(endpoints);
      const queue = must(model.get(ep));
      const r = rand();
      if (r < 0.45) {
        const job = makeJob({ endpointId: ep, createdAt: now, queuedAt: now });
        await store.insert(job);
        queue.push(job.id);
        inserted++;
      } else if (r < 0.7) {
        const got = await store.claim(ep, 'w', now);
        expect(got?.id).toBe(queue.shift());
        if (got) running.set(got.id, got);
      } else if (r < 0.8 && queue.length > 0) {
        const [id] = queue.splice(Math.floor(rand() * queue.length), 1);
        expect(await store.cancel(must(id), now, RETENTION)).toBeDefined();
      } else if (r < 0.85 && queue.length > 0) {
        const [id] = queue.splice(Math.floor(rand() * queue.length), 1);
        expect(await store.delete(must(id))).toBe(true);
      } else if (r < 0.95 && running.size > 0) {
        const job = pick([...running.values()]);
        running.delete(job.id);
        if (rand() < 0.5)
          must(await store.requeue(job.id, { ...LOST, attempt: job.attempt, now: now, maxAttempts: 1_000 }));
        else {
          must(await store.finish(job.id, job.attempt, { status: 'FAILED', error: 'x' }, now, RETENTION));
          must(await store.retry(job.id, now));
        }
        must(model.get(job.endpointId)).push(job.id);
      } else if (r < 0.96) {
        expect(await store.purgeQueue(ep)).toEqual(queue);
        queue.length = 0;
      }
      if (inserted % 500 === 0)
        for (const e of endpoints) expect(await store.queueDepth(e)).toBe(must(model.get(e)).length);
    }
    for (const ep of endpoints) {
      const drained: string[] = [];
      for (let job = await store.claim(ep, 'w', now); job; job = await store.claim(ep, 'w', now)) drained.push(job.id);
      expect(drained).toEqual(model.get(ep));
      expect(await store.queueDepth(ep)).toBe(0);
    }
  });

  it('inserts and drains 100k queued jobs in order', async () => {
    const store = new MemoryStore();
    const n = 100_000;
    for (let i = 0; i < n; i++) await store.insert(makeJob({ id: `bulk-${i}`, endpointId: 'bulk' }));
    expect(await store.queueDepth('bulk')).toBe(n);
    for (let i = 0; i < n; i++) {
      const job = await store.claim('bulk', 'w', T0 + i);
      if (job?.id !== `bulk-${i}`) expect.fail(`claim ${i} returned ${job?.id}`);
    }
    expect(await store.claim('bulk', 'w', T0 + n)).toBeUndefined();
    expect(await store.counts('bulk')).toEqual({ completed: 0, failed: 0, inProgress: n, inQueue: 0, retried: 0 });
  });
});
