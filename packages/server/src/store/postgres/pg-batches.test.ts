import { afterEach, describe, expect, it, vi } from 'vitest';
import { DuplicateJobError } from '../../errors.js';
import { decodePayload, header } from '../../cluster/wire.js';
import { COMPLETE, makeJob, RETENTION, T0 } from '../conformance/fixtures.test-helpers.js';
import { loadPg } from './connect.js';
import type { PgStore } from './pg-store.js';
import { openTestPgStore, PG_TEST_URL, pgUnavailable } from './pg-test-db.test-helpers.js';

// The PostgreSQL store's multi-row statements: concurrent inserts in one INSERT, /runsync inserts that send their
// cluster messages themselves (what the bus would have sent), and claims riding in inserts and in finishes.
const skip = await pgUnavailable();

describe.skipIf(skip !== undefined)(`PgStore batches${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });
  const open = async (): Promise<PgStore> => {
    const s = await openTestPgStore();
    cleanup.push(() => s.close());
    return s;
  };

  it('concurrent inserts keep their order in the queue; a duplicate id (stored, or twice in one batch) is refused alone', async () => {
    const s = await open();
    const stored = makeJob();
    await s.insert(stored);
    const jobs = Array.from({ length: 30 }, (_, i) => makeJob({ sync: i % 2 === 1 }));
    const twice = makeJob();
    const results = await Promise.allSettled([
      ...jobs.slice(0, 10).map((j) => s.insert(j)),
      s.insert({ ...stored }),
      s.insert(twice),
      s.insert({ ...twice }),
      ...jobs.slice(10).map((j) => s.insert(j)),
    ]);
    const refused = results.flatMap((r, i) => (r.status === 'rejected' ? [i] : []));
    expect(refused).toEqual([10, 12]);
    for (const i of refused) expect((results[i] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateJobError);
    // FIFO: the async (/run) and sync (/runsync) jobs were each queued in submission order.
    const claimed: string[] = [];
    for (let job; (job = await s.claim('ep', 'w1', T0)); ) claimed.push(job.id);
    const order = (ids: string[]) => ids.filter((id) => claimed.includes(id));
    expect(claimed).toHaveLength(32); // the stored one, the 30 and `twice`
    const asyncIds = jobs.filter((j) => !j.sync).map((j) => j.id);
    const syncIds = jobs.filter((j) => j.sync).map((j) => j.id);
    expect(order(claimed).filter((id) => asyncIds.includes(id))).toEqual(asyncIds);
    expect(order(claimed).filter((id) => syncIds.includes(id))).toEqual(syncIds);
  });

  it('/runsync inserts send their queued messages themselves when asked to; claims send none, marked as sent', async () => {
    const s = await open();
    const { Client } = loadPg();
    const listener = new Client({ connectionString: PG_TEST_URL });
    await listener.connect();
    cleanup.push(() => listener.end());
    const channel = `berth_${s.schema}`;
    const payloads: string[] = [];
    listener.on('notification', (n) => payloads.push(n.payload ?? ''));
    await listener.query(`LISTEN "${channel}"`);
    const head = header('replica-a');
    s.jobs.eventNotice = () => ({ channel, header: head });

    const jobs = [
      makeJob({ sync: true, cost: 0.25, webhook: 'http://x/y' }),
      makeJob({ sync: true }),
      makeJob(), // a /run job: its insert commits synchronously and leaves the 'queued' message to the bus
    ];
    for (const j of jobs) await s.insert(j);
    const running = await Promise.all(jobs.map(() => s.claim('ep', 'w1', T0 + 1)));
    expect(running.map((r) => r?.id)).toEqual(jobs.map((j) => j.id));
    await listener.query('SELECT 1'); // notifications committed before are delivered before its answer
    const got = payloads.flatMap((p) => decodePayload(p, header('replica-b'), () => true) ?? []);
    expect(got).toEqual([1, 2].map(() => ({ t: 'queued', endpointId: 'ep' })));
    for (const job of running) expect(s.takeNoticed(job!.id, 1, 'IN_PROGRESS')).toBe(true);
    expect(s.takeNoticed(jobs[0]!.id, 1, 'IN_PROGRESS')).toBe(false); // once
  });

  it('a claim of the same turn as an insert rides in its statement: the new job, unless an older one is queued', async () => {
    const s = await open();
    // Alone: the insert stores the job running on the worker (one statement), as a claim would have.
    const a = makeJob({ sync: true });
    const [, got] = await Promise.all([s.insert(a), s.claim('ep', 'w1', T0 + 5)]);
    expect(got).toEqual({
      ...a,
      status: 'IN_PROGRESS',
      attempt: 1,
      workerId: 'w1',
      startedAt: T0 + 5,
      executionDeadline: T0 + 5 + a.executionTimeout,
    });
    expect(await s.get(a.id)).toEqual(got);
    // An older job is queued: the new one is queued behind it and the claim comes back empty (FIFO).
    const older = makeJob();
    await s.insert(older);
    const b = makeJob({ sync: true });
    expect((await Promise.all([s.insert(b), s.claim('ep', 'w1', T0)]))[1]).toBeUndefined();
    expect((await s.claim('ep', 'w1', T0))?.id).toBe(older.id);
    expect((await s.claim('ep', 'w1', T0))?.id).toBe(b.id);
    // A claim rides with the one insert waiting to go out; inserts added after it in the same turn join the statement
    // (the multi-row form) and are queued.
    const three = [makeJob({ sync: true }), makeJob({ sync: true }), makeJob({ sync: true })];
    const r = await Promise.all([
      s.insert(three[0]!),
      s.claim('ep', 'w2', T0),
      s.insert(three[1]!),
      s.insert(three[2]!),
    ]);
    expect([r[1]?.id, r[1]?.workerId]).toEqual([three[0]!.id, 'w2']);
    expect((await s.get(three[0]!.id))?.status).toBe('IN_PROGRESS');
    for (const j of three.slice(1)) expect((await s.get(j.id))?.status).toBe('IN_QUEUE');
    expect((await s.claim('ep', 'w1', T0))?.id).toBe(three[1]!.id);
    // A duplicate id is refused and its claim comes back empty.
    const dup = await Promise.allSettled([s.insert({ ...a }), s.claim('ep', 'w1', T0)]);
    expect(dup[0]).toMatchObject({ status: 'rejected', reason: expect.any(DuplicateJobError) });
    expect(dup[1]).toMatchObject({ status: 'fulfilled', value: undefined });
    // While other replicas listen (the notifying statement): claimed and queued alike; the running record is
    // marked as sent (only its submitter here knows the new job).
    s.jobs.eventNotice = () => ({ channel: `berth_${s.schema}`, header: header('replica-a') });
    await s.claim('ep', 'w1', T0); // the last job above: the queue is empty again
    const c = makeJob({ sync: true });
    const [, running] = await Promise.all([s.insert(c), s.claim('ep', 'w1', T0)]);
    expect(running?.id).toBe(c.id);
    expect(s.takeNoticed(c.id, 1, 'IN_PROGRESS')).toBe(true);
  });

  it('claims of the same turn as results ride in their finish statement: FIFO, one statement, an empty one hints', async () => {
    const s = await open();
    const [a, b, c] = [makeJob(), makeJob(), makeJob()];
    for (const j of [a, b, c]) await s.insert(j);
    expect((await s.claim('ep', 'w1', T0))?.id).toBe(a.id);
    expect((await s.claim('ep', 'w2', T0))?.id).toBe(b.id);
    const query = vi.spyOn(s.pool, 'query');
    const asyncQuery = vi.spyOn(s['db'].asyncPool, 'query'); // where claims go on their own
    // Two results and two claims in one turn (the credits they free): one statement on the main pool.
    const [doneA, doneB, toW3, toW4] = await Promise.all([
      s.finish(a.id, 1, COMPLETE, T0 + 1, RETENTION),
      s.finish(b.id, 1, COMPLETE, T0 + 1, RETENTION),
      s.claim('ep', 'w3', T0 + 2),
      s.claim('ep', 'w4', T0 + 2),
    ]);
    expect(query).toHaveBeenCalledTimes(1);
    expect(asyncQuery).not.toHaveBeenCalled();
    expect([doneA?.status, doneB?.status]).toEqual(['COMPLETED', 'COMPLETED']);
    expect(toW3).toMatchObject({ id: c.id, status: 'IN_PROGRESS', attempt: 1, workerId: 'w3', startedAt: T0 + 2 });
    expect(toW3?.executionDeadline).toBe(T0 + 2 + c.executionTimeout);
    expect(await s.get(c.id)).toEqual(toW3);
    expect(toW4).toBeUndefined();
    expect((await s.counts('ep')).completed).toBe(2);
    // The queue ran dry: the next claim asks nothing of the database, until a job is queued.
    query.mockClear();
    expect(await s.claim('ep', 'w4', T0)).toBeUndefined();
    expect(query).not.toHaveBeenCalled();
    expect(asyncQuery).not.toHaveBeenCalled();
    const d = makeJob();
    const e = makeJob();
    for (const j of [d, e]) await s.insert(j);
    expect((await s.claim('ep', 'w4', T0))?.id).toBe(d.id);
    // One result (the one-row form) and a claim while other replicas listen: the claimed record is marked as sent.
    s.jobs.eventNotice = () => ({ channel: `berth_${s.schema}`, header: header('replica-a') });
    query.mockClear();
    asyncQuery.mockClear();
    const [doneC, toW5] = await Promise.all([
      s.finish(c.id, 1, COMPLETE, T0 + 3, RETENTION),
      s.claim('ep', 'w5', T0 + 3),
    ]);
    expect(query).toHaveBeenCalledTimes(1);
    expect(asyncQuery).not.toHaveBeenCalled();
    expect(doneC).toMatchObject({ id: c.id, status: 'COMPLETED', output: { text: ['done'] } });
    expect(toW5).toMatchObject({ id: e.id, workerId: 'w5' });
    expect(s.takeNoticed(e.id, 1, 'IN_PROGRESS')).toBe(true);
    // A stale result still lets its claim through.
    const f = makeJob();
    await s.insert(f);
    const [stale, toW6] = await Promise.all([
      s.finish(c.id, 1, COMPLETE, T0 + 4, RETENTION),
      s.claim('ep', 'w6', T0 + 4),
    ]);
    expect(stale).toBeUndefined();
    expect(toW6?.id).toBe(f.id);
    // A claim on its own that takes the last queued job also says so: the next one asks nothing of the database.
    const [g, h] = [makeJob(), makeJob()];
    for (const j of [g, h]) await s.insert(j);
    expect((await s.claim('ep', 'w7', T0))?.id).toBe(g.id);
    expect((await s.claim('ep', 'w7', T0))?.id).toBe(h.id); // g's claim left h queued: this one asked
    asyncQuery.mockClear();
    expect(await s.claim('ep', 'w7', T0)).toBeUndefined();
    expect(asyncQuery).not.toHaveBeenCalled();
  });
});
