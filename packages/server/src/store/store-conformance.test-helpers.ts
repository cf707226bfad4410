import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FinishPatch, JobRecord, RetentionPolicy, Store } from './types.js';

// The one test suite every `Store` implementation must pass (memory now; SQLite and PostgreSQL later).
// Time is always passed explicitly (no wall clock, no sleeps); races are written as sequences of calls, plus a
// few `Promise.all` pairs that a durable store must serialise. What the suite takes as the contract beyond the
// doc comments of `types.ts`:
// - returned records are copies of the top-level fields; nested values (input, output, progress, chunks) are
//   read-only for callers, so deep copies are not required;
// - `due()` reports what is due now, statelessly: a job nobody acted on is reported again by the next call;
// - retry puts the job at the end of its endpoint's queue; a new attempt starts with no progress and an empty
//   stream; a seq gap in `appendStream` is refused (0); chunks not yet taken survive the job's end.

/** Distinct values so sync and async retention can be told apart. */
export const RETENTION: RetentionPolicy = { async: 30 * 60_000, sync: 60_000 };
/** An arbitrary epoch ms. */
export const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;

let counter = 0;

/** A new IN_QUEUE job on endpoint `ep`, executionTimeout 60 s, ttl 24 h; ids are unique per process. */
export function makeJob(overrides: Partial<JobRecord> = {}): JobRecord {
  counter++;
  return {
    id: `job-${counter}`,
    endpointId: 'ep',
    status: 'IN_QUEUE',
    input: { n: counter },
    executionTimeout: 60_000,
    lowPriority: false,
    sync: false,
    attempt: 0,
    retries: 0,
    createdAt: T0,
    queuedAt: T0,
    expiresAt: T0 + 24 * HOUR,
    ...overrides,
  };
}

export function must<T>(value: T | undefined, what = 'a value'): T {
  if (value === undefined) throw new Error(`expected ${what}, got undefined`);
  return value;
}

const COMPLETE: FinishPatch = { status: 'COMPLETED', output: { text: ['done'] } };
const FAIL: FinishPatch = { status: 'FAILED', error: 'handler threw' };
const TIME_OUT: FinishPatch = { status: 'TIMED_OUT', error: 'execution timed out' };
const NOTHING_DUE = { expired: [], timedOut: [], retained: [], leaseExpired: [] };
const ids = (rs: JobRecord[]): string[] => rs.map((r) => r.id).sort();

/**
 * Registers `describe(name)` with the conformance tests. `makeStore` is called before each test and must return
 * an empty store; it is closed after the test.
 *
 * @example runStoreConformance('MemoryStore', () => new MemoryStore())
 */
export function runStoreConformance(name: string, makeStore: () => Promise<Store> | Store): void {
  describe(name, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    const add = async (o: Partial<JobRecord> = {}): Promise<JobRecord> => {
      const job = makeJob(o);
      await store.insert(job);
      return job;
    };
    /** Inserts a job and claims it (the endpoint's queue must hold nothing older). */
    const start = async (o: Partial<JobRecord> = {}, workerId = 'w1', now = T0 + 1_000): Promise<JobRecord> => {
      const job = await add(o);
      const claimed = must(await store.claim(job.endpointId, workerId, now), 'a claimed job');
      expect(claimed.id).toBe(job.id);
      return claimed;
    };
    const end = async (patch: FinishPatch, o: Partial<JobRecord> = {}, now = T0 + 2_000): Promise<JobRecord> => {
      const job = await start(o);
      return must(await store.finish(job.id, job.attempt, patch, now, RETENTION), 'a finished job');
    };
    /** Asserts the job did not change across `fn`. */
    const unchanged = async (id: string, fn: () => Promise<void>): Promise<void> => {
      const before = await store.get(id);
      await fn();
      expect(await store.get(id)).toEqual(before);
    };

    describe('insert and get', () => {
      it('round-trips every field, optional ones included', async () => {
        const job = makeJob({
          endpointId: 'my-endpoint',
          input: { prompt: 'héllo ✓', nested: { list: [1, 2.5, null, true, 'x'], empty: {} }, n: -0.125 },
          webhook: 'https://example.org/hook?a=1',
          s3Config: { accessId: 'AK', accessSecret: 'SK', bucketName: 'b', endpointUrl: 'https://s3.example.org', objectPath: 'p/q' },
          executionTimeout: 5_000,
          lowPriority: true,
          sync: true,
          createdAt: T0 + 1,
          queuedAt: T0 + 2,
          expiresAt: T0 + 10_000,
        });
        await store.insert(job);
        expect(await store.get(job.id)).toEqual(job);
        expect(await store.get('no-such-job')).toBeUndefined();
      });

      it('returns copies: mutating a returned record or the inserted object does not change the store', async () => {
        const job = makeJob({ input: { a: 1 } });
        const original = structuredClone(job);
        await store.insert(job);
        job.status = 'COMPLETED';
        job.retries = 7;
        job.input = { replaced: true };
        const got = must(await store.get(job.id));
        expect(got).toEqual(original);
        got.status = 'FAILED';
        got.attempt = 99;
        got.input = {};
        got.error = 'x';
        expect(await store.get(job.id)).toEqual(original);
        const claimed = must(await store.claim('ep', 'w1', T0));
        claimed.attempt = 5;
        claimed.workerId = 'other';
        const after = must(await store.get(job.id));
        expect(after.attempt).toBe(1);
        expect(after.workerId).toBe('w1');
      });

      it('rejects a duplicate id and keeps the first job', async () => {
        const job = await add({ input: { first: true } });
        await expect(store.insert({ ...job, input: { second: true } })).rejects.toThrow();
        expect((await store.get(job.id))?.input).toEqual({ first: true });
        expect(await store.queueDepth('ep')).toBe(1);
      });

      it('returns from each transition the record that get returns afterwards', async () => {
        const job = await add();
        const claimed = must(await store.claim('ep', 'w1', T0 + 10));
        expect(await store.get(job.id)).toEqual(claimed);
        const failed = must(await store.finish(job.id, 1, FAIL, T0 + 20, RETENTION));
        expect(await store.get(job.id)).toEqual(failed);
        const retried = must(await store.retry(job.id, T0 + 30));
        expect(await store.get(job.id)).toEqual(retried);
        const { after } = must(await store.cancel(job.id, T0 + 40, RETENTION));
        expect(await store.get(job.id)).toEqual(after);
      });
    });

    describe('claim', () => {
      it('returns undefined on an empty or unknown queue', async () => {
        expect(await store.claim('ep', 'w1', T0)).toBeUndefined();
        await start();
        expect(await store.claim('ep', 'w1', T0)).toBeUndefined();
        expect(await store.claim('elsewhere', 'w1', T0)).toBeUndefined();
      });

      it('takes jobs in FIFO order per endpoint, endpoints independent', async () => {
        const a1 = await add({ endpointId: 'a' });
        const b1 = await add({ endpointId: 'b' });
        const a2 = await add({ endpointId: 'a' });
        const a3 = await add({ endpointId: 'a' });
        const b2 = await add({ endpointId: 'b' });
        expect((await store.claim('b', 'w', T0))?.id).toBe(b1.id);
        expect((await store.claim('a', 'w', T0))?.id).toBe(a1.id);
        expect((await store.claim('a', 'w', T0))?.id).toBe(a2.id);
        expect((await store.claim('b', 'w', T0))?.id).toBe(b2.id);
        expect(await store.claim('b', 'w', T0)).toBeUndefined();
        expect((await store.claim('a', 'w', T0))?.id).toBe(a3.id);
        expect(await store.claim('a', 'w', T0)).toBeUndefined();
      });

      it('marks the job IN_PROGRESS with attempt + 1, workerId, startedAt and executionDeadline', async () => {
        const job = await add({ executionTimeout: 45_000 });
        const now = T0 + 3_000;
        const claimed = must(await store.claim('ep', 'worker-7', now));
        expect(claimed).toMatchObject({ id: job.id, status: 'IN_PROGRESS', attempt: 1, workerId: 'worker-7', startedAt: now, executionDeadline: now + 45_000 });
        expect(claimed).toMatchObject({ input: job.input, queuedAt: job.queuedAt, retries: 0 });
        expect(await store.get(job.id)).toEqual(claimed);
      });

      it('never hands out cancelled, deleted or purged jobs', async () => {
        const a = await add();
        const b = await add();
        const c = await add();
        const d = await add();
        await store.cancel(b.id, T0, RETENTION);
        await store.delete(c.id);
        expect((await store.claim('ep', 'w', T0))?.id).toBe(a.id);
        expect((await store.claim('ep', 'w', T0))?.id).toBe(d.id);
        expect(await store.claim('ep', 'w', T0)).toBeUndefined();
        await add();
        await add();
        await store.purgeQueue('ep');
        expect(await store.claim('ep', 'w', T0)).toBeUndefined();
        const e = await add();
        expect((await store.claim('ep', 'w', T0))?.id).toBe(e.id);
      });

      it('treats an id deleted and inserted again as a new job at the end of the queue', async () => {
        const a = await add({ expiresAt: T0 + 10_000 });
        const b = await add();
        await store.delete(a.id);
        const c = await add();
        const again = makeJob({ id: a.id, input: { second: true }, expiresAt: T0 + 50_000 });
        await store.insert(again);
        expect(await store.get(a.id)).toEqual(again);
        const order: string[] = [];
        for (let job = await store.claim('ep', 'w', T0); job; job = await store.claim('ep', 'w', T0)) order.push(job.id);
        expect(order).toEqual([b.id, c.id, a.id]);
        expect((await store.get(a.id))?.input).toEqual({ second: true });
        expect((await store.due(T0 + 10_000, 100)).expired).toEqual([]);
      });

      it('gives one job to exactly one of two concurrent claimers', async () => {
        await add();
        const got = await Promise.all([store.claim('ep', 'w1', T0), store.claim('ep', 'w2', T0)]);
        expect(got.filter((r) => r !== undefined)).toHaveLength(1);
      });

      it('gives each job to exactly one of many concurrent claimers', async () => {
        const jobs = await Promise.all(Array.from({ length: 20 }, () => add()));
        const got = await Promise.all(Array.from({ length: 30 }, (_, i) => store.claim('ep', `w${i}`, T0)));
        const claimed = got.filter((r): r is JobRecord => r !== undefined);
        expect(ids(claimed)).toEqual(ids(jobs));
      });
    });

    describe('finish', () => {
      it.each([COMPLETE, FAIL, TIME_OUT])('moves IN_PROGRESS to $status, sets finishedAt and retention', async (patch) => {
        const job = await start();
        const now = T0 + 9_000;
        const done = must(await store.finish(job.id, job.attempt, patch, now, RETENTION));
        expect(done).toMatchObject({ status: patch.status, finishedAt: now, retainUntil: now + RETENTION.async, attempt: 1, workerId: 'w1' });
        if (patch.status === 'COMPLETED') {
          expect(done.output).toEqual(patch.output);
          expect(done.error).toBeUndefined();
        } else {
          expect(done.error).toBe(patch.error);
          expect(done.output).toBeUndefined();
        }
        expect(await store.get(job.id)).toEqual(done);
      });

      it('keeps a /runsync job for the sync retention', async () => {
        const done = await end(COMPLETE, { sync: true }, T0 + 5_000);
        expect(done.retainUntil).toBe(T0 + 5_000 + RETENTION.sync);
      });

      it('refuses a wrong attempt and changes nothing', async () => {
        const job = await start();
        for (const attempt of [0, 2, -1]) {
          await unchanged(job.id, async () => {
            expect(await store.finish(job.id, attempt, COMPLETE, T0 + 5, RETENTION)).toBeUndefined();
          });
        }
      });

      it('refuses a job that is not IN_PROGRESS and changes nothing', async () => {
        const queued = await add({ endpointId: 'other' });
        const completed = await end(COMPLETE);
        const failed = await end(FAIL);
        const cancelled = await start();
        await store.cancel(cancelled.id, T0, RETENTION);
        for (const [id, attempt] of [[queued.id, 0], [queued.id, 1], [completed.id, 1], [failed.id, 1], [cancelled.id, 1]] as const) {
          for (const patch of [COMPLETE, FAIL, TIME_OUT]) {
            await unchanged(id, async () => {
              expect(await store.finish(id, attempt, patch, T0 + 7_000, RETENTION)).toBeUndefined();
            });
          }
        }
        expect(await store.finish('no-such-job', 1, COMPLETE, T0, RETENTION)).toBeUndefined();
      });
    });

    describe('cancel', () => {
      it('cancels a queued job: before and after, and it is never claimed', async () => {
        const job = await add();
        const res = must(await store.cancel(job.id, T0 + 50, RETENTION));
        expect(res.before).toEqual(job);
        expect(res.after).toMatchObject({ id: job.id, status: 'CANCELLED', finishedAt: T0 + 50, retainUntil: T0 + 50 + RETENTION.async });
        expect(await store.get(job.id)).toEqual(res.after);
        expect(await store.claim('ep', 'w1', T0 + 60)).toBeUndefined();
        expect(await store.queueDepth('ep')).toBe(0);
      });

      it('cancels a running job; the attempt can then no longer finish, progress, stream, lease or requeue', async () => {
        const job = await start({ sync: true });
        const res = must(await store.cancel(job.id, T0 + 2_000, RETENTION));
        expect(res.before).toMatchObject({ status: 'IN_PROGRESS', attempt: 1, workerId: 'w1' });
        expect(res.after).toMatchObject({ status: 'CANCELLED', finishedAt: T0 + 2_000, retainUntil: T0 + 2_000 + RETENTION.sync });
        await unchanged(job.id, async () => {
          expect(await store.finish(job.id, 1, COMPLETE, T0 + 3_000, RETENTION)).toBeUndefined();
          expect(await store.finish(job.id, 1, FAIL, T0 + 3_000, RETENTION)).toBeUndefined();
          expect(await store.setProgress(job.id, 1, { pct: 50 })).toBe(false);
          expect(await store.appendStream(job.id, 1, 0, ['late'])).toBe(0);
          expect(await store.setLease(job.id, 1, T0 + 9_000)).toBe(false);
          expect(await store.requeue(job.id, 1, T0 + 3_000, 3, 'lost', RETENTION)).toBeUndefined();
          expect(await store.retry(job.id, T0 + 3_000)).toBeUndefined();
        });
        expect(await store.takeStream(job.id)).toEqual([]);
        expect(await store.runningOn('w1')).toEqual([]);
      });

      it('refuses terminal and unknown jobs', async () => {
        const terminal = [await end(COMPLETE), await end(FAIL), await end(TIME_OUT)];
        const cancelled = await add({ endpointId: 'other' });
        await store.cancel(cancelled.id, T0, RETENTION);
        for (const job of [...terminal, cancelled]) {
          await unchanged(job.id, async () => {
            expect(await store.cancel(job.id, T0 + 5_000, RETENTION)).toBeUndefined();
          });
        }
        expect(await store.cancel('no-such-job', T0, RETENTION)).toBeUndefined();
      });
    });

    describe('retry', () => {
      it.each([FAIL, TIME_OUT])('requeues a $status job with output, error, progress and workerId cleared', async (patch) => {
        const job = await start({ queuedAt: T0 });
        await store.setProgress(job.id, 1, { pct: 90 });
        await store.finish(job.id, 1, patch, T0 + 2_000, RETENTION);
        const retried = must(await store.retry(job.id, T0 + 3_000));
        expect(retried).toMatchObject({ id: job.id, status: 'IN_QUEUE', retries: 1, queuedAt: T0 + 3_000, input: job.input, attempt: 1 });
        for (const k of ['output', 'error', 'progress', 'workerId'] as const) expect(retried[k]).toBeUndefined();
        expect(await store.get(job.id)).toEqual(retried);
        const again = must(await store.claim('ep', 'w2', T0 + 4_000));
        expect(again).toMatchObject({ id: job.id, attempt: 2, workerId: 'w2', startedAt: T0 + 4_000, executionDeadline: T0 + 4_000 + job.executionTimeout });
        expect(again.progress).toBeUndefined();
      });

      it('puts the job at the end of the queue', async () => {
        const a = await start();
        await store.finish(a.id, 1, FAIL, T0 + 2_000, RETENTION);
        const b = await add();
        const c = await add();
        await store.retry(a.id, T0 + 3_000);
        const order: string[] = [];
        for (let i = 0; i < 3; i++) order.push(must(await store.claim('ep', 'w', T0 + 4_000)).id);
        expect(order).toEqual([b.id, c.id, a.id]);
      });

      it('counts attempts and retries up across several rounds', async () => {
        const job = await start();
        for (let round = 1; round <= 3; round++) {
          const t = T0 + round * 10_000;
          must(await store.finish(job.id, round, round % 2 ? FAIL : TIME_OUT, t, RETENTION));
          expect(must(await store.retry(job.id, t + 1)).retries).toBe(round);
          expect(must(await store.claim('ep', 'w', t + 2)).attempt).toBe(round + 1);
        }
      });

      it('refuses queued, running, completed, cancelled and unknown jobs', async () => {
        const queued = await add({ endpointId: 'other' });
        const running = await start();
        const completed = await end(COMPLETE);
        const cancelled = await add({ endpointId: 'third' });
        await store.cancel(cancelled.id, T0, RETENTION);
        for (const job of [queued, running, completed, cancelled]) {
          await unchanged(job.id, async () => {
            expect(await store.retry(job.id, T0 + 5_000)).toBeUndefined();
          });
        }
        expect(await store.retry('no-such-job', T0)).toBeUndefined();
      });
    });

    describe('requeue', () => {
      it('puts a running attempt back in the queue with retries + 1', async () => {
        const job = await start();
        await store.setProgress(job.id, 1, 'half');
        const back = must(await store.requeue(job.id, 1, T0 + 2_000, 3, 'worker lost', RETENTION));
        expect(back).toMatchObject({ status: 'IN_QUEUE', retries: 1, attempt: 1 });
        expect(back.workerId).toBeUndefined();
        expect(back.progress).toBeUndefined();
        expect(back.error).toBeUndefined();
        expect(await store.get(job.id)).toEqual(back);
        expect(await store.runningOn('w1')).toEqual([]);
        const again = must(await store.claim('ep', 'w2', T0 + 3_000));
        expect(again).toMatchObject({ id: job.id, attempt: 2, workerId: 'w2', executionDeadline: T0 + 3_000 + job.executionTimeout });
        expect(again.progress).toBeUndefined();
      });

      it('fails the job with the given error once the attempt reaches maxAttempts', async () => {
        const job = await start();
        must(await store.requeue(job.id, 1, T0 + 2_000, 2, 'worker lost', RETENTION));
        must(await store.claim('ep', 'w2', T0 + 3_000));
        const failed = must(await store.requeue(job.id, 2, T0 + 4_000, 2, 'worker lost twice', RETENTION));
        expect(failed).toMatchObject({ status: 'FAILED', error: 'worker lost twice', retries: 1, finishedAt: T0 + 4_000, retainUntil: T0 + 4_000 + RETENTION.async });
        expect(await store.claim('ep', 'w3', T0 + 5_000)).toBeUndefined();
        expect(must(await store.retry(job.id, T0 + 6_000)).retries).toBe(2);
      });

      it('refuses a stale attempt or a job that is not running', async () => {
        const job = await start();
        await unchanged(job.id, async () => {
          expect(await store.requeue(job.id, 2, T0 + 2_000, 3, 'x', RETENTION)).toBeUndefined();
          expect(await store.requeue(job.id, 0, T0 + 2_000, 3, 'x', RETENTION)).toBeUndefined();
        });
        const queued = await add({ endpointId: 'other' });
        const done = await end(COMPLETE, { endpointId: 'third' });
        for (const j of [queued, done]) {
          await unchanged(j.id, async () => {
            expect(await store.requeue(j.id, j.attempt, T0 + 2_000, 3, 'x', RETENTION)).toBeUndefined();
            expect(await store.requeue(j.id, 1, T0 + 2_000, 1, 'x', RETENTION)).toBeUndefined();
          });
        }
        expect(await store.requeue('no-such-job', 1, T0, 3, 'x', RETENTION)).toBeUndefined();
      });
    });

    describe('progress and stream', () => {
      it('keeps the latest progress of the current attempt only', async () => {
        const job = await start();
        expect(await store.setProgress(job.id, 1, { pct: 10 })).toBe(true);
        expect(await store.setProgress(job.id, 1, { pct: 20 })).toBe(true);
        expect((await store.get(job.id))?.progress).toEqual({ pct: 20 });
        await unchanged(job.id, async () => {
          expect(await store.setProgress(job.id, 2, { pct: 99 })).toBe(false);
          expect(await store.setProgress(job.id, 0, { pct: 99 })).toBe(false);
        });
        const queued = await add({ endpointId: 'other' });
        expect(await store.setProgress(queued.id, 0, 1)).toBe(false);
        expect(await store.setProgress(queued.id, 1, 1)).toBe(false);
        await store.finish(job.id, 1, COMPLETE, T0 + 2_000, RETENTION);
        await unchanged(job.id, async () => {
          expect(await store.setProgress(job.id, 1, { pct: 100 })).toBe(false);
        });
        expect(await store.setProgress('no-such-job', 1, 1)).toBe(false);
      });

      it('appends by seq, skips re-sent chunks, refuses gaps, and takeStream consumes in order', async () => {
        const job = await start();
        expect(await store.takeStream(job.id)).toEqual([]);
        expect(await store.appendStream(job.id, 1, 0, ['a', 'b'])).toBe(2);
        expect(await store.appendStream(job.id, 1, 2, [{ c: 3 }])).toBe(1);
        expect(await store.takeStream(job.id)).toEqual(['a', 'b', { c: 3 }]);
        expect(await store.takeStream(job.id)).toEqual([]);
        expect(await store.appendStream(job.id, 1, 1, ['b', { c: 3 }, 'd'])).toBe(1);
        expect(await store.appendStream(job.id, 1, 0, ['a', 'b'])).toBe(0);
        expect(await store.appendStream(job.id, 1, 6, ['g'])).toBe(0);
        expect(await store.takeStream(job.id)).toEqual(['d']);
        expect(await store.appendStream(job.id, 1, 4, ['e', null, 7])).toBe(3);
        expect(await store.appendStream(job.id, 1, 7, ['h'])).toBe(1);
        expect(await store.takeStream(job.id)).toEqual(['e', null, 7, 'h']);
      });

      it('accepts chunks of the current attempt only', async () => {
        const job = await start();
        expect(await store.appendStream(job.id, 2, 0, ['x'])).toBe(0);
        expect(await store.appendStream(job.id, 0, 0, ['x'])).toBe(0);
        const queued = await add({ endpointId: 'other' });
        expect(await store.appendStream(queued.id, 0, 0, ['x'])).toBe(0);
        expect(await store.appendStream('no-such-job', 1, 0, ['x'])).toBe(0);
        expect(await store.takeStream(job.id)).toEqual([]);
        expect(await store.takeStream(queued.id)).toEqual([]);
        expect(await store.takeStream('no-such-job')).toEqual([]);
      });

      it('still delivers chunks not yet read once the job is terminal', async () => {
        const job = await start();
        await store.appendStream(job.id, 1, 0, ['a']);
        expect(await store.takeStream(job.id)).toEqual(['a']);
        await store.appendStream(job.id, 1, 1, ['b', 'c']);
        await store.finish(job.id, 1, COMPLETE, T0 + 2_000, RETENTION);
        expect(await store.appendStream(job.id, 1, 3, ['late'])).toBe(0);
        expect(await store.takeStream(job.id)).toEqual(['b', 'c']);
        expect(await store.takeStream(job.id)).toEqual([]);
      });

      it('starts a fresh stream for a new attempt', async () => {
        const job = await start();
        await store.appendStream(job.id, 1, 0, ['a1', 'b1']);
        expect(await store.takeStream(job.id)).toEqual(['a1', 'b1']);
        await store.appendStream(job.id, 1, 2, ['c1']);
        must(await store.requeue(job.id, 1, T0 + 2_000, 3, 'lost', RETENTION));
        must(await store.claim('ep', 'w2', T0 + 3_000));
        expect(await store.appendStream(job.id, 1, 3, ['stale'])).toBe(0);
        expect(await store.appendStream(job.id, 2, 0, ['a2'])).toBe(1);
        expect(await store.appendStream(job.id, 2, 1, ['b2'])).toBe(1);
        expect(await store.takeStream(job.id)).toEqual(['a2', 'b2']);
      });

      it('starts a fresh stream after retry', async () => {
        const job = await start();
        await store.appendStream(job.id, 1, 0, ['a1', 'b1']);
        await store.finish(job.id, 1, FAIL, T0 + 2_000, RETENTION);
        await store.takeStream(job.id);
        await store.retry(job.id, T0 + 3_000);
        must(await store.claim('ep', 'w2', T0 + 4_000));
        expect(await store.appendStream(job.id, 2, 0, ['a2'])).toBe(1);
        expect(await store.takeStream(job.id)).toEqual(['a2']);
      });
    });

    describe('leases, expiry, purge and delete', () => {
      it('sets and clears the lease of the running attempt only', async () => {
        const job = await start();
        expect(await store.setLease(job.id, 1, T0 + 30_000)).toBe(true);
        expect((await store.get(job.id))?.leaseUntil).toBe(T0 + 30_000);
        expect(await store.setLease(job.id, 2, T0 + 40_000)).toBe(false);
        expect((await store.get(job.id))?.leaseUntil).toBe(T0 + 30_000);
        expect(await store.setLease(job.id, 1, null)).toBe(true);
        expect((await store.get(job.id))?.leaseUntil).toBeUndefined();
        const queued = await add({ endpointId: 'other' });
        expect(await store.setLease(queued.id, 0, T0)).toBe(false);
        expect(await store.setLease('no-such-job', 1, T0)).toBe(false);
      });

      it('lists the IN_PROGRESS jobs of a worker', async () => {
        const a = await start({}, 'w1');
        const b = await start({}, 'w2');
        const c = await start({}, 'w1');
        await add();
        expect(ids(await store.runningOn('w1'))).toEqual(ids([a, c]));
        expect(ids(await store.runningOn('w2'))).toEqual([b.id]);
        await store.finish(a.id, 1, COMPLETE, T0 + 2_000, RETENTION);
        await store.cancel(b.id, T0 + 2_000, RETENTION);
        expect(await store.runningOn('w1')).toEqual([must(await store.get(c.id))]);
        expect(await store.runningOn('w2')).toEqual([]);
        expect(await store.runningOn('nobody')).toEqual([]);
      });

      it('sets the ttl deadline', async () => {
        const job = await add();
        expect(await store.setExpiry(job.id, T0 + 77_000)).toBe(true);
        expect((await store.get(job.id))?.expiresAt).toBe(T0 + 77_000);
        expect(await store.setExpiry('no-such-job', T0)).toBe(false);
      });

      it('purges only the IN_QUEUE jobs of the endpoint and returns their ids', async () => {
        const running = await start({ endpointId: 'a' });
        const done = await end(COMPLETE, { endpointId: 'a' });
        const q1 = await add({ endpointId: 'a' });
        const q2 = await add({ endpointId: 'a' });
        const cancelled = await add({ endpointId: 'a' });
        await store.cancel(cancelled.id, T0, RETENTION);
        const other = await add({ endpointId: 'b' });
        expect((await store.purgeQueue('a')).sort()).toEqual(ids([q1, q2]));
        expect(await store.get(q1.id)).toBeUndefined();
        expect(await store.get(q2.id)).toBeUndefined();
        expect((await store.get(running.id))?.status).toBe('IN_PROGRESS');
        expect((await store.get(done.id))?.status).toBe('COMPLETED');
        expect((await store.get(cancelled.id))?.status).toBe('CANCELLED');
        expect(await store.queueDepth('a')).toBe(0);
        expect(await store.queueDepth('b')).toBe(1);
        expect((await store.claim('b', 'w', T0))?.id).toBe(other.id);
        expect(must(await store.finish(running.id, 1, COMPLETE, T0 + 3_000, RETENTION)).status).toBe('COMPLETED');
        expect(await store.purgeQueue('a')).toEqual([]);
        expect(await store.purgeQueue('unknown')).toEqual([]);
      });

      it('deletes a job in any state', async () => {
        const queued = await add();
        const running = await start({ endpointId: 'other' });
        const done = await end(FAIL, { endpointId: 'third' });
        for (const job of [queued, running, done]) {
          expect(await store.delete(job.id)).toBe(true);
          expect(await store.get(job.id)).toBeUndefined();
          expect(await store.delete(job.id)).toBe(false);
        }
        expect(await store.claim('ep', 'w', T0)).toBeUndefined();
        expect(await store.finish(running.id, 1, COMPLETE, T0, RETENTION)).toBeUndefined();
        expect(await store.retry(done.id, T0)).toBeUndefined();
        expect(await store.runningOn('w1')).toEqual([]);
        expect(await store.due(T0 + 30 * 24 * HOUR, 100)).toEqual(NOTHING_DUE);
      });
    });

    describe('due', () => {
      it('reports nothing before a deadline and each kind at its deadline', async () => {
        const ttl = await add({ endpointId: 'q', expiresAt: T0 + 50_000 });
        const running = await start({ executionTimeout: 20_000 }, 'w1', T0 + 1_000);
        const leased = await start({ executionTimeout: 90_000 }, 'w1', T0 + 1_000);
        await store.setLease(leased.id, 1, T0 + 15_000);
        const done = await end(COMPLETE, { endpointId: 'r', sync: true }, T0 + 2_000);
        expect(await store.due(T0 + 14_999, 100)).toEqual(NOTHING_DUE);
        expect(ids((await store.due(T0 + 15_000, 100)).leaseExpired)).toEqual([leased.id]);
        expect((await store.due(T0 + 20_999, 100)).timedOut).toEqual([]);
        const timedOut = (await store.due(T0 + 21_000, 100)).timedOut;
        expect(timedOut).toEqual([must(await store.get(running.id))]);
        expect(timedOut[0]).toMatchObject({ status: 'IN_PROGRESS', attempt: 1, workerId: 'w1' });
        expect((await store.due(T0 + 49_999, 100)).expired).toEqual([]);
        expect(ids((await store.due(T0 + 50_000, 100)).expired)).toEqual([ttl.id]);
        expect((await store.due(T0 + 2_000 + RETENTION.sync - 1, 100)).retained).toEqual([]);
        expect(ids((await store.due(T0 + 2_000 + RETENTION.sync, 100)).retained)).toEqual([done.id]);
      });

      it('reports ttl expiry in any state', async () => {
        const at = T0 + 100_000;
        const queued = await add({ expiresAt: at });
        const running = await start({ endpointId: 'b', expiresAt: at, executionTimeout: 10 * HOUR });
        const done = await end(COMPLETE, { endpointId: 'c', expiresAt: at }, T0 + 99_000);
        const cancelled = await add({ endpointId: 'd', expiresAt: at });
        await store.cancel(cancelled.id, T0 + 99_000, RETENTION);
        await add({ endpointId: 'e', expiresAt: at + 1 });
        const due = await store.due(at, 100);
        expect(ids(due.expired)).toEqual(ids([queued, running, done, cancelled]));
        expect(due.expired.find((r) => r.id === running.id)).toMatchObject({ status: 'IN_PROGRESS', attempt: 1, workerId: 'w1' });
      });

      it('does not report a job finished, cancelled or requeued before its execution deadline', async () => {
        const a = await start({ executionTimeout: 10_000 });
        const b = await start({ executionTimeout: 10_000 });
        const c = await start({ executionTimeout: 10_000 });
        await store.finish(a.id, 1, COMPLETE, T0 + 2_000, RETENTION);
        await store.cancel(b.id, T0 + 2_000, RETENTION);
        await store.requeue(c.id, 1, T0 + 2_000, 3, 'lost', RETENTION);
        expect((await store.due(T0 + 20_000, 100)).timedOut).toEqual([]);
      });

      it('honours the new execution deadline of a later attempt, not the old one', async () => {
        const job = await start({ executionTimeout: 10_000 }, 'w1', T0);
        await store.finish(job.id, 1, FAIL, T0 + 1_000, RETENTION);
        await store.retry(job.id, T0 + 2_000);
        must(await store.claim('ep', 'w2', T0 + 5_000));
        expect((await store.due(T0 + 14_999, 100)).timedOut).toEqual([]);
        const due = await store.due(T0 + 15_000, 100);
        expect(due.timedOut).toHaveLength(1);
        expect(due.timedOut[0]).toMatchObject({ id: job.id, attempt: 2 });
      });

      it('does not report a cleared lease or the lease of an attempt that ended', async () => {
        const cleared = await start();
        const finished = await start();
        const requeued = await start();
        for (const j of [cleared, finished, requeued]) await store.setLease(j.id, 1, T0 + 5_000);
        await store.setLease(cleared.id, 1, null);
        await store.finish(finished.id, 1, FAIL, T0 + 2_000, RETENTION);
        await store.requeue(requeued.id, 1, T0 + 2_000, 3, 'lost', RETENTION);
        must(await store.claim('ep', 'w2', T0 + 3_000));
        expect((await store.due(T0 + 6_000, 100)).leaseExpired).toEqual([]);
      });

      it('honours an expiry moved later or earlier by setExpiry', async () => {
        const later = await add({ expiresAt: T0 + 10_000 });
        const earlier = await add({ expiresAt: T0 + 10_000 });
        await store.setExpiry(later.id, T0 + 20_000);
        await store.setExpiry(earlier.id, T0 + 5_000);
        expect(await store.due(T0 + 4_999, 100)).toEqual(NOTHING_DUE);
        expect(ids((await store.due(T0 + 10_000, 100)).expired)).toEqual([earlier.id]);
        await store.delete(earlier.id);
        expect((await store.due(T0 + 19_999, 100)).expired).toEqual([]);
        expect(ids((await store.due(T0 + 20_000, 100)).expired)).toEqual([later.id]);
      });

      it('reports a job once per kind even when its deadline was set twice to the same time', async () => {
        const job = await add({ expiresAt: T0 + 10_000 });
        await store.setExpiry(job.id, T0 + 10_000);
        await store.setExpiry(job.id, T0 + 10_000);
        expect(ids((await store.due(T0 + 10_000, 100)).expired)).toEqual([job.id]);
      });

      it('does not report retention of a job that was retried', async () => {
        const job = await end(FAIL, {}, T0 + 2_000);
        await store.retry(job.id, T0 + 3_000);
        expect((await store.due(T0 + 2_000 + RETENTION.async, 100)).retained).toEqual([]);
      });

      it('reports a due job again while nobody acted on it (a sweep that crashed loses nothing)', async () => {
        const expired = await add({ endpointId: 'x', expiresAt: T0 + 5_000 });
        const timedOut = await start({ executionTimeout: 5_000 });
        const leased = await start({ executionTimeout: 10 * HOUR });
        await store.setLease(leased.id, 1, T0 + 5_000);
        const retained = await end(COMPLETE, { endpointId: 'r' }, T0 + 2_000);
        const at = T0 + 2_000 + RETENTION.async;
        for (let i = 0; i < 2; i++) {
          const due = await store.due(at, 100);
          expect(ids(due.expired)).toEqual([expired.id]);
          expect(ids(due.timedOut)).toEqual([timedOut.id]);
          expect(ids(due.leaseExpired)).toEqual([leased.id]);
          expect(ids(due.retained)).toEqual([retained.id]);
        }
        await store.delete(expired.id);
        await store.finish(timedOut.id, 1, TIME_OUT, at, RETENTION);
        await store.requeue(leased.id, 1, at, 3, 'lost', RETENTION);
        await store.delete(retained.id);
        expect(await store.due(at, 100)).toEqual(NOTHING_DUE);
      });

      it('respects limit per kind; the rest come with the next call once the first are handled', async () => {
        const at = T0 + 10_000;
        const jobs: JobRecord[] = [];
        for (let i = 0; i < 5; i++) jobs.push(await add({ endpointId: `e${i}`, expiresAt: at }));
        for (let i = 0; i < 3; i++) await start({ endpointId: `r${i}`, executionTimeout: 5_000 });
        const seen: string[] = [];
        for (const expected of [2, 2, 1, 0]) {
          const due = await store.due(at, 2);
          expect(due.expired).toHaveLength(expected);
          expect(due.timedOut.length).toBeLessThanOrEqual(2);
          for (const r of due.expired) {
            seen.push(r.id);
            expect(await store.delete(r.id)).toBe(true);
          }
          for (const r of due.timedOut) await store.finish(r.id, r.attempt, TIME_OUT, at, RETENTION);
        }
        expect(seen.sort()).toEqual(ids(jobs));
        expect((await store.due(at, 2)).timedOut).toEqual([]);
        expect((await store.counts('r0')).failed + (await store.counts('r1')).failed + (await store.counts('r2')).failed).toBe(3);
      });
    });

    describe('counts', () => {
      it('are zero for an unknown endpoint', async () => {
        expect(await store.counts('none')).toEqual({ completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 });
        expect(await store.queueDepth('none')).toBe(0);
      });

      it('track live queue and running counts and cumulative outcomes', async () => {
        const [a, b, c, d] = [await start(), await start(), await start(), await start()];
        const e = await add();
        await add({ endpointId: 'other' });
        expect(await store.counts('ep')).toEqual({ completed: 0, failed: 0, inProgress: 4, inQueue: 1, retried: 0 });
        await store.finish(a.id, 1, COMPLETE, T0 + 2_000, RETENTION);
        await store.finish(b.id, 1, FAIL, T0 + 2_000, RETENTION);
        await store.finish(c.id, 1, TIME_OUT, T0 + 2_000, RETENTION);
        await store.requeue(d.id, 1, T0 + 2_000, 3, 'lost', RETENTION);
        await store.retry(b.id, T0 + 3_000);
        expect(await store.counts('ep')).toEqual({ completed: 1, failed: 2, inProgress: 0, inQueue: 3, retried: 2 });
        expect(await store.queueDepth('ep')).toBe(3);
        await store.delete(a.id);
        await store.delete(c.id);
        await store.cancel(e.id, T0 + 4_000, RETENTION);
        expect(await store.counts('ep')).toEqual({ completed: 1, failed: 2, inProgress: 0, inQueue: 2, retried: 2 });
        const next = must(await store.claim('ep', 'w', T0 + 5_000));
        await store.requeue(next.id, next.attempt, T0 + 6_000, next.attempt, 'lost again', RETENTION);
        expect(await store.counts('ep')).toEqual({ completed: 1, failed: 3, inProgress: 0, inQueue: 1, retried: 2 });
        await store.purgeQueue('ep');
        expect(await store.counts('ep')).toEqual({ completed: 1, failed: 3, inProgress: 0, inQueue: 0, retried: 2 });
        expect(await store.counts('other')).toEqual({ completed: 0, failed: 0, inProgress: 0, inQueue: 1, retried: 0 });
        expect(await store.queueDepth('ep')).toBe(0);
      });

      it('count a cancelled job neither as completed nor as failed', async () => {
        const running = await start();
        await store.cancel(running.id, T0 + 2_000, RETENTION);
        const queued = await add();
        await store.cancel(queued.id, T0 + 2_000, RETENTION);
        expect(await store.counts('ep')).toEqual({ completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 });
      });
    });

    describe('races', () => {
      it('refuses a late finish after cancel', async () => {
        const job = await start();
        await store.cancel(job.id, T0 + 2_000, RETENTION);
        for (const patch of [COMPLETE, FAIL, TIME_OUT]) expect(await store.finish(job.id, 1, patch, T0 + 3_000, RETENTION)).toBeUndefined();
        const now = must(await store.get(job.id));
        expect(now.status).toBe('CANCELLED');
        expect(now.output).toBeUndefined();
      });

      it('refuses a late completion after a timeout', async () => {
        const job = await start();
        const [due] = (await store.due(job.executionDeadline ?? 0, 10)).timedOut;
        must(await store.finish(must(due).id, must(due).attempt, TIME_OUT, T0 + 61_000, RETENTION));
        await unchanged(job.id, async () => {
          expect(await store.finish(job.id, 1, COMPLETE, T0 + 62_000, RETENTION)).toBeUndefined();
          expect(await store.requeue(job.id, 1, T0 + 62_000, 3, 'lost', RETENTION)).toBeUndefined();
        });
        expect((await store.get(job.id))?.status).toBe('TIMED_OUT');
      });

      it('refuses results of an old attempt after requeue, before and after the job is taken again', async () => {
        const job = await start();
        must(await store.requeue(job.id, 1, T0 + 2_000, 3, 'lost', RETENTION));
        expect(await store.finish(job.id, 1, COMPLETE, T0 + 2_500, RETENTION)).toBeUndefined();
        must(await store.claim('ep', 'w2', T0 + 3_000));
        await unchanged(job.id, async () => {
          expect(await store.finish(job.id, 1, COMPLETE, T0 + 3_500, RETENTION)).toBeUndefined();
          expect(await store.setProgress(job.id, 1, 'old')).toBe(false);
          expect(await store.appendStream(job.id, 1, 0, ['old'])).toBe(0);
          expect(await store.setLease(job.id, 1, T0 + 9_000)).toBe(false);
          expect(await store.requeue(job.id, 1, T0 + 3_500, 3, 'lost', RETENTION)).toBeUndefined();
        });
        expect(must(await store.finish(job.id, 2, COMPLETE, T0 + 4_000, RETENTION))).toMatchObject({ status: 'COMPLETED', workerId: 'w2', attempt: 2 });
      });

      type Move = { name: string; status: string; run: (j: JobRecord) => Promise<unknown> };
      const moves = (): Move[] => [
        { name: 'complete', status: 'COMPLETED', run: (j) => store.finish(j.id, j.attempt, COMPLETE, T0 + 5_000, RETENTION) },
        { name: 'fail', status: 'FAILED', run: (j) => store.finish(j.id, j.attempt, FAIL, T0 + 5_000, RETENTION) },
        { name: 'time out', status: 'TIMED_OUT', run: (j) => store.finish(j.id, j.attempt, TIME_OUT, T0 + 5_000, RETENTION) },
        { name: 'cancel', status: 'CANCELLED', run: (j) => store.cancel(j.id, T0 + 5_000, RETENTION) },
        { name: 'requeue', status: 'IN_QUEUE', run: (j) => store.requeue(j.id, j.attempt, T0 + 5_000, 3, 'lost', RETENTION) },
      ];

      it('lets exactly one of two competing transitions of a running job win (cancel after requeue still applies)', async () => {
        const all = moves();
        for (const x of all) {
          for (const y of all) {
            const job = await start();
            const [rx, ry] = await Promise.all([x.run(job), y.run(job)]);
            if (x.name !== y.name && [x.name, y.name].every((n) => n === 'cancel' || n === 'requeue')) {
              // cancel names no attempt, so it also applies to the requeued job: cancel always ends up winning.
              expect((x.name === 'cancel' ? rx : ry), `${x.name} vs ${y.name}`).toBeDefined();
              expect((await store.get(job.id))?.status).toBe('CANCELLED');
              continue;
            }
            const winners = [rx === undefined ? [] : [x], ry === undefined ? [] : [y]].flat();
            expect(winners, `${x.name} vs ${y.name}`).toHaveLength(1);
            expect((await store.get(job.id))?.status, `${x.name} vs ${y.name}`).toBe(must(winners[0]).status);
            if (must(winners[0]).status === 'IN_QUEUE') await store.purgeQueue('ep');
          }
        }
      });

      it('lets exactly one of two concurrent retries or cancels win', async () => {
        const failed = await end(FAIL);
        const retries = await Promise.all([store.retry(failed.id, T0 + 3_000), store.retry(failed.id, T0 + 3_000)]);
        expect(retries.filter((r) => r !== undefined)).toHaveLength(1);
        expect((await store.get(failed.id))?.retries).toBe(1);
        expect(await store.queueDepth('ep')).toBe(1);
        const cancels = await Promise.all([store.cancel(failed.id, T0 + 4_000, RETENTION), store.cancel(failed.id, T0 + 4_000, RETENTION)]);
        expect(cancels.filter((r) => r !== undefined)).toHaveLength(1);
        expect(await store.claim('ep', 'w', T0 + 5_000)).toBeUndefined();
      });
    });
  });
}
