import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { COMPLETE, RETENTION, T0, makeJob, must } from '../conformance/fixtures.test-helpers.js';
import { DuplicateJobError } from '../../errors.js';
import { SqliteStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-sqlite-thread-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `db-${++n}.sqlite`);

describe.each(['normal', 'full'] as const)('SqliteStore on its thread (durability %s)', (durability) => {
  it('answers a write only after its commit is visible to another connection', async () => {
    const f = file();
    const store = new SqliteStore({ file: f, durability, thread: true });
    const other = new BetterSqlite3(f, { readonly: true });
    const seen = () => (other.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number }).n;
    try {
      await store.counts('ep'); // the thread is up
      let settled = false;
      const p = store.insert(makeJob()).then(() => (settled = true));
      expect(seen()).toBe(0); // still on this thread's side: not sent, not committed
      expect(settled).toBe(false);
      await p;
      expect(seen()).toBe(1);
    } finally {
      other.close();
      await store.close();
    }
  });

  it('sends the operations of one turn as one batch, and a batch filled while another commits as the next', async () => {
    const store = new SqliteStore({ file: file(), durability, thread: true });
    try {
      await store.counts('ep');
      const before = store.commits;
      await Promise.all(Array.from({ length: 200 }, () => store.insert(makeJob())));
      expect(store.commits - before).toBe(1);
      const first = store.insert(makeJob());
      await new Promise((r) => setImmediate(r)); // the first batch is on the thread
      const later = Array.from({ length: 50 }, () => store.insert(makeJob()));
      await Promise.all([first, ...later]);
      expect(store.commits - before).toBe(3);
      expect(await store.queueDepth('ep')).toBe(251);
    } finally {
      await store.close();
    }
  });

  it('keeps results in order, rejects only the failing operation of a batch, and revives DuplicateJobError', async () => {
    const store = new SqliteStore({ file: file(), durability, thread: true });
    try {
      const job = makeJob();
      const [a, b, c] = await Promise.allSettled([store.insert(job), store.insert(job), store.get(job.id)]);
      expect(a.status).toBe('fulfilled');
      expect(b.status === 'rejected' && b.reason instanceof DuplicateJobError && b.reason.jobId === job.id).toBe(true);
      expect(c.status === 'fulfilled' && c.value?.id).toBe(job.id);
      const running = must(await store.claim('ep', 'w1', T0 + 1));
      expect((await store.finish(running.id, running.attempt, COMPLETE, T0 + 2, RETENTION))?.status).toBe('COMPLETED');
    } finally {
      await store.close();
    }
  });

  it('answers a claim on a queue known to be empty without the thread, and sends it when a job may be queued', async () => {
    const store = new SqliteStore({ file: file(), durability, thread: true });
    try {
      const unknown = store.claim('ep', 'w1', T0); // before the thread's first answer nothing is known: asked
      expect(await unknown).toBeUndefined();
      let answered = false;
      void store.claim('ep', 'w1', T0).then(() => (answered = true));
      await Promise.resolve();
      expect(answered).toBe(true); // no round trip
      const job = makeJob();
      const inserting = store.insert(job); // not awaited: the claim below must not be answered from memory
      const claimed = await store.claim('ep', 'w1', T0 + 1);
      await inserting;
      expect(claimed?.id).toBe(job.id);
    } finally {
      await store.close();
    }
  });

  it('fails only the batch holding a value that cannot cross to the thread', async () => {
    const store = new SqliteStore({ file: file(), durability, thread: true });
    try {
      const bad = store.setProgress('nope', 1, { fn: () => 1 });
      await expect(bad).rejects.toThrow();
      await store.insert(makeJob());
      expect(await store.queueDepth('ep')).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('commits what was written before close, and reopens it (also in the event loop)', async () => {
    const f = file();
    const store = new SqliteStore({ file: f, durability, thread: true });
    const jobs = Array.from({ length: 20 }, () => makeJob());
    const writes = jobs.map((j) => store.insert(j));
    await store.close(); // not awaited before: close sends and waits for them
    await Promise.all(writes);
    expect(() => store.insert(makeJob())).toThrow(/closed/);
    const again = new SqliteStore({ file: f, durability });
    try {
      expect(await again.queueDepth('ep')).toBe(20);
    } finally {
      await again.close();
    }
  });
});
