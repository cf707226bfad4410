import { describe, expect, it } from 'vitest';
import type { WebhookAttempt } from '../types.js';
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

const HOOK = 'https://example.org/hook';
const FAR = T0 + 10_000_000;
const ok = (at: number): WebhookAttempt => ({ at, status: 204, durationMs: 3 });
const bad = (at: number): WebhookAttempt => ({ at, error: 'connect ECONNREFUSED', durationMs: 1 });

/** The webhook outbox: written by the store inside terminal transitions, claimed with a lease, attempts recorded. */
export function webhookOutboxTests(makeStore: MakeStore): void {
  describe('webhook outbox', () => {
    const ctx = useStore(makeStore);

    it('every terminal transition of a job with a webhook writes one delivery whose body is the job object plus input and webhook', async () => {
      const done = await ctx.end(COMPLETE, { webhook: HOOK, input: { q: 1 } }, T0 + 2_000);
      const failed = await ctx.end(FAIL, { webhook: HOOK });
      const timed = await ctx.end(TIME_OUT, { webhook: HOOK });
      const queued = await ctx.add({ webhook: HOOK });
      must(await ctx.store.cancel(queued.id, T0 + 3_000, RETENTION));
      const lost = await ctx.start({ webhook: HOOK });
      must(
        await ctx.store.requeue(lost.id, {
          ...LOST,
          attempt: lost.attempt,
          now: T0 + 4_000,
          maxAttempts: 1,
          failError: 'worker lost',
        }),
      );
      const plain = await ctx.end(COMPLETE); // no webhook: no delivery
      expect(await ctx.store.webhookDeliveries(plain.id)).toEqual([]);

      const [d] = await ctx.store.webhookDeliveries(done.id);
      expect(d).toMatchObject({
        jobId: done.id,
        endpointId: 'ep',
        url: HOOK,
        createdAt: T0 + 2_000,
        nextAttemptAt: T0 + 2_000,
        attempts: [],
      });
      expect(JSON.parse(must(d).body)).toEqual({
        id: done.id,
        status: 'COMPLETED',
        output: COMPLETE.status === 'COMPLETED' ? COMPLETE.output : null,
        input: { q: 1 },
        webhook: HOOK,
        event: 'completed',
        delayTime: 1_000,
        executionTime: 1_000,
        workerId: 'w1',
      });
      const statusOf = async (id: string) => JSON.parse(must((await ctx.store.webhookDeliveries(id))[0]).body).status;
      expect(await statusOf(failed.id)).toBe('FAILED');
      expect(await statusOf(timed.id)).toBe('TIMED_OUT');
      expect(await statusOf(queued.id)).toBe('CANCELLED');
      expect(await statusOf(lost.id)).toBe('FAILED');
      const due = await ctx.store.claimWebhooks(FAR, 100, FAR + 1);
      expect(due.map((x) => x.jobId).sort()).toEqual([done.id, failed.id, timed.id, queued.id, lost.id].sort());
    });

    it('inserting a job that is already terminal (a refused input stored as FAILED) writes its delivery too', async () => {
      const failed = makeJob({
        status: 'FAILED',
        error: 'bad input',
        webhook: HOOK,
        finishedAt: T0 + 7,
        retainUntil: T0 + 60_000,
      });
      await ctx.store.insert(failed);
      const [d] = await ctx.store.webhookDeliveries(failed.id);
      expect(d).toMatchObject({ jobId: failed.id, createdAt: T0 + 7, nextAttemptAt: T0 + 7 });
      expect(JSON.parse(must(d).body)).toMatchObject({
        id: failed.id,
        status: 'FAILED',
        error: 'bad input',
        webhook: HOOK,
      });
      await ctx.store.insert(makeJob({ webhook: HOOK })); // IN_QUEUE: nothing yet
      expect(await ctx.store.claimWebhooks(FAR, 10, FAR + 1)).toHaveLength(1);
    });

    it('a requeue back to IN_QUEUE, a refused finish or cancel writes nothing', async () => {
      const j = await ctx.start({ webhook: HOOK });
      must(await ctx.store.requeue(j.id, { ...LOST, attempt: j.attempt, now: T0 + 3_000, maxAttempts: 3 }));
      expect(await ctx.store.finish(j.id, j.attempt, COMPLETE, T0 + 4_000, RETENTION)).toBeUndefined();
      expect(await ctx.store.webhookDeliveries(j.id)).toEqual([]);
      const done = await ctx.end(COMPLETE, { webhook: HOOK, endpointId: 'other' });
      expect(await ctx.store.cancel(done.id, T0 + 5_000, RETENTION)).toBeUndefined();
      expect(await ctx.store.webhookDeliveries(done.id)).toHaveLength(1);
    });

    it('claim leases: a claimed delivery is not due again until the lease ends', async () => {
      const done = await ctx.end(COMPLETE, { webhook: HOOK }, T0 + 2_000);
      expect(await ctx.store.claimWebhooks(T0 + 1_999, 10, T0 + 9_000)).toEqual([]);
      const [d] = await ctx.store.claimWebhooks(T0 + 2_000, 10, T0 + 9_000);
      expect(must(d).jobId).toBe(done.id);
      expect(await ctx.store.claimWebhooks(T0 + 8_999, 10, T0 + 20_000)).toEqual([]);
      expect(await ctx.store.claimWebhooks(T0 + 9_000, 10, T0 + 20_000)).toHaveLength(1); // the sender died
    });

    it('claims the earliest first, at most limit', async () => {
      const a = await ctx.end(COMPLETE, { webhook: HOOK }, T0 + 5_000);
      const b = await ctx.end(COMPLETE, { webhook: HOOK }, T0 + 3_000);
      await ctx.end(COMPLETE, { webhook: HOOK }, T0 + 4_000);
      const got = await ctx.store.claimWebhooks(FAR, 2, FAR + 1);
      expect(got.map((d) => d.jobId)).toEqual([b.id, got[1]!.jobId]);
      expect(got[1]!.jobId).not.toBe(a.id);
    });

    it('records attempts in order, keeps the id across attempts, and ends with null', async () => {
      const done = await ctx.end(FAIL, { webhook: HOOK }, T0 + 2_000);
      const [d] = await ctx.store.claimWebhooks(T0 + 2_000, 10, T0 + 60_000);
      expect(await ctx.store.recordWebhookAttempt(must(d).id, bad(T0 + 2_000), T0 + 12_000)).toBe(true);
      expect(await ctx.store.claimWebhooks(T0 + 11_999, 10, FAR)).toEqual([]);
      const [again] = await ctx.store.claimWebhooks(T0 + 12_000, 10, T0 + 60_000);
      expect(must(again).id).toBe(must(d).id);
      expect(must(again).attempts).toEqual([bad(T0 + 2_000)]);
      expect(await ctx.store.recordWebhookAttempt(must(d).id, ok(T0 + 12_000), null)).toBe(true);
      const [final] = await ctx.store.webhookDeliveries(done.id);
      expect(final).toMatchObject({
        id: must(d).id,
        nextAttemptAt: null,
        attempts: [bad(T0 + 2_000), ok(T0 + 12_000)],
      });
      expect(await ctx.store.claimWebhooks(FAR, 10, FAR + 1)).toEqual([]);
      expect(await ctx.store.recordWebhookAttempt('msg_nope_0', ok(T0), null)).toBe(false);
    });

    it('a retried job that ends again gets a second delivery with another id; the first keeps its FAILED body', async () => {
      const failed = await ctx.end(FAIL, { webhook: HOOK });
      must(await ctx.store.retry(failed.id, T0 + 3_000));
      const again = must(await ctx.store.claim('ep', 'w2', T0 + 4_000));
      must(await ctx.store.finish(again.id, again.attempt, COMPLETE, T0 + 5_000, RETENTION));
      const ds = await ctx.store.webhookDeliveries(failed.id);
      expect(ds).toHaveLength(2);
      expect(ds[0]!.id).not.toBe(ds[1]!.id);
      expect(ds.map((d) => JSON.parse(d.body).status)).toEqual(['FAILED', 'COMPLETED']);
    });

    it('a pending delivery outlives its deleted job; a finished one goes with it (or when it finishes after)', async () => {
      const a = await ctx.end(COMPLETE, { webhook: HOOK });
      const b = await ctx.end(COMPLETE, { webhook: HOOK });
      const [da, db] = await ctx.store.claimWebhooks(FAR, 10, FAR + 1);
      const byJob = new Map([da, db].map((d) => [must(d).jobId, must(d).id]));
      await ctx.store.recordWebhookAttempt(byJob.get(a.id)!, ok(T0), null); // a: finished
      expect(await ctx.store.delete(a.id)).toBe(true);
      expect(await ctx.store.delete(b.id)).toBe(true);
      expect(await ctx.store.webhookDeliveries(a.id)).toEqual([]);
      const pending = await ctx.store.claimWebhooks(FAR + 1, 10, FAR + 2);
      expect(pending.map((d) => d.jobId)).toEqual([b.id]);
      expect(JSON.parse(pending[0]!.body).id).toBe(b.id);
      expect(await ctx.store.recordWebhookAttempt(byJob.get(b.id)!, ok(T0), null)).toBe(true);
      expect(await ctx.store.webhookDeliveries(b.id)).toEqual([]);
    });
    it('keeps webhookEvents with the job; a job whose events leave out completed gets no terminal delivery', async () => {
      const startOnly = await ctx.end(COMPLETE, { webhook: HOOK, webhookEvents: ['start'] });
      expect((await ctx.store.get(startOnly.id))?.webhookEvents).toEqual(['start']);
      expect(await ctx.store.webhookDeliveries(startOnly.id)).toEqual([]);
      const all = await ctx.add({ webhook: HOOK, webhookEvents: ['start', 'progress', 'output', 'completed'] });
      expect((await ctx.store.get(all.id))?.webhookEvents).toEqual(['start', 'progress', 'output', 'completed']);
      expect((await ctx.store.get(all.id))?.webhook).toBe(HOOK);
      const plain = await ctx.add({ webhook: HOOK });
      expect((await ctx.store.get(plain.id))?.webhookEvents).toBeUndefined();
    });

    it('enqueueWebhook stores an event delivery: listed, claimed before the terminal one, which waits for it', async () => {
      const job = await ctx.start({ webhook: HOOK, webhookEvents: ['start', 'completed'] });
      const d = {
        id: `msg_${job.id}_start_0a0b0c`,
        jobId: job.id,
        endpointId: 'ep',
        url: HOOK,
        body: '{"event":"start"}',
        createdAt: T0 + 1_500,
        nextAttemptAt: T0 + 1_500,
        attempts: [],
      };
      await ctx.store.enqueueWebhook(d);
      await ctx.store.enqueueWebhook({ ...d, body: 'ignored: the id is already stored' });
      must(await ctx.store.finish(job.id, job.attempt, COMPLETE, T0 + 2_000, RETENTION));
      const listed = await ctx.store.webhookDeliveries(job.id);
      expect(listed.map((x) => x.id)).toEqual([d.id, `msg_${job.id}_0`]);
      expect(must(listed[0]).body).toBe('{"event":"start"}');
      const due = await ctx.store.claimWebhooks(FAR, 10, FAR + 1);
      expect(due.filter((x) => x.jobId === job.id).map((x) => x.id)).toEqual([d.id]);
      expect(await ctx.store.claimWebhooks(FAR, 10, FAR + 2)).toEqual([]); // still leased: completed waits
      expect(await ctx.store.recordWebhookAttempt(d.id, ok(FAR), null)).toBe(true);
      expect(must((await ctx.store.webhookDeliveries(job.id))[0]).attempts).toEqual([ok(FAR)]);
      expect((await ctx.store.claimWebhooks(FAR, 10, FAR + 1)).map((x) => x.id)).toEqual([`msg_${job.id}_0`]);
    });

    const event = (jobId: string, kind: string, at: number, body: object) => ({
      id: `msg_${jobId}_${kind}_${at.toString(16)}`,
      jobId,
      endpointId: 'ep',
      url: HOOK,
      body: JSON.stringify({ id: jobId, event: kind, ...body }),
      createdAt: at,
      nextAttemptAt: at,
      attempts: [],
    });

    it("a job's deliveries are claimed one at a time, oldest first; a failed one waiting for its retry holds the later ones", async () => {
      const job = await ctx.start({ webhook: HOOK, webhookEvents: ['progress', 'completed'] });
      const other = await ctx.start({ webhook: HOOK, webhookEvents: ['progress'] });
      const p1 = event(job.id, 'start', T0 + 10, {});
      await ctx.store.enqueueWebhook(p1);
      await ctx.store.enqueueWebhook(event(job.id, 'progress', T0 + 20, { progress: 1 }));
      await ctx.store.enqueueWebhook(event(other.id, 'progress', T0 + 30, { progress: 9 }));
      const first = await ctx.store.claimWebhooks(T0 + 100, 10, T0 + 1_000);
      const otherId = `msg_${other.id}_progress_${(T0 + 30).toString(16)}`;
      expect(first.map((x) => x.id).sort()).toEqual([p1.id, otherId].sort());
      expect(await ctx.store.recordWebhookAttempt(otherId, ok(T0 + 100), null)).toBe(true);
      expect(await ctx.store.recordWebhookAttempt(p1.id, bad(T0 + 100), T0 + 5_000)).toBe(true);
      expect(await ctx.store.claimWebhooks(T0 + 4_999, 10, T0 + 6_000)).toEqual([]);
      expect((await ctx.store.claimWebhooks(T0 + 5_000, 10, T0 + 6_000)).map((x) => x.id)).toEqual([p1.id]);
      expect(await ctx.store.recordWebhookAttempt(p1.id, ok(T0 + 5_000), null)).toBe(true);
      const next = await ctx.store.claimWebhooks(T0 + 5_000, 10, T0 + 6_000);
      expect(next.map((x) => JSON.parse(x.body).progress)).toEqual([1]);
    });

    it("a progress replaces the job's unclaimed ones; an output takes their chunks; claimed or tried ones stay", async () => {
      const job = await ctx.start({ webhook: HOOK, webhookEvents: ['progress', 'output'] });
      const head = event(job.id, 'start', T0 + 1, {});
      await ctx.store.enqueueWebhook(head);
      for (let i = 1; i <= 3; i++)
        await ctx.store.enqueueWebhook(event(job.id, 'progress', T0 + 10 * i, { progress: i }));
      await ctx.store.enqueueWebhook(event(job.id, 'output', T0 + 11, { stream: [{ output: 'a' }, { output: 'b' }] }));
      await ctx.store.enqueueWebhook(event(job.id, 'output', T0 + 21, { stream: [{ output: 'c' }] }));
      await ctx.store.enqueueWebhook(event(job.id, 'output', T0 + 31, { stream: [{ output: 'd' }] }));
      const held = await ctx.store.webhookDeliveries(job.id);
      expect(held.map((x) => [x.id.split('_')[2], JSON.parse(x.body).progress ?? JSON.parse(x.body).stream])).toEqual([
        ['start', undefined],
        ['progress', 3],
        ['output', [{ output: 'a' }, { output: 'b' }, { output: 'c' }, { output: 'd' }]],
      ]);
      // A claimed delivery (on the wire) is never replaced: the next one is stored beside it.
      expect((await ctx.store.claimWebhooks(T0 + 40, 10, T0 + 9_000)).map((x) => x.id)).toEqual([head.id]);
      expect(await ctx.store.recordWebhookAttempt(head.id, ok(T0 + 40), null)).toBe(true);
      const [p3] = await ctx.store.claimWebhooks(T0 + 41, 10, T0 + 9_000);
      expect(JSON.parse(must(p3).body).progress).toBe(3);
      await ctx.store.enqueueWebhook(event(job.id, 'progress', T0 + 50, { progress: 4 }));
      await ctx.store.enqueueWebhook(event(job.id, 'progress', T0 + 60, { progress: 5 }));
      const after = (await ctx.store.webhookDeliveries(job.id)).filter((x) => x.id.includes('_progress_'));
      expect(after.map((x) => JSON.parse(x.body).progress)).toEqual([3, 5]);
    });
  });
}
