import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { COMPLETE, RETENTION, T0, makeJob, must } from '../conformance/fixtures.test-helpers.js';
import { SqliteStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-sqlite-dur-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `db-${++n}.sqlite`);

describe('SqliteStore durability', () => {
  it('answers a write only after its commit is visible to another connection', async () => {
    const f = file();
    const store = new SqliteStore({ file: f });
    const other = new BetterSqlite3(f, { readonly: true });
    const seen = () => (other.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number }).n;
    try {
      const job = makeJob();
      let settled = false;
      const p = store.insert(job).then(() => (settled = true));
      expect(seen()).toBe(0); // in the open batch, not committed yet
      expect(settled).toBe(false);
      await p;
      expect(seen()).toBe(1);
    } finally {
      other.close();
      await store.close();
    }
  });

  it('groups the writes of one event-loop turn into one transaction', async () => {
    const store = new SqliteStore({ file: file() });
    try {
      const before = store.commits;
      await Promise.all(Array.from({ length: 200 }, () => store.insert(makeJob())));
      expect(store.commits - before).toBe(1);
      await store.insert(makeJob());
      expect(store.commits - before).toBe(2);
      expect(await store.queueDepth('ep')).toBe(201);
    } finally {
      await store.close();
    }
  });

  it('a claim on an empty queue and a stream poll with nothing new open no transaction', async () => {
    const store = new SqliteStore({ file: file() });
    try {
      const job = makeJob();
      await store.insert(job);
      const running = must(await store.claim('ep', 'w1', T0 + 1));
      const before = store.commits;
      expect(await store.claim('ep', 'w1', T0 + 2)).toBeUndefined();
      expect(await store.takeStream(running.id)).toEqual([]);
      expect(store.commits).toBe(before);
      await store.appendStream(running.id, running.attempt, 0, ['x']);
      expect(await store.takeStream(running.id)).toEqual(['x']);
      expect(store.commits).toBe(before + 2);
    } finally {
      await store.close();
    }
  });

  it('a failing write is rolled back alone; the rest of its batch commits', async () => {
    const store = new SqliteStore({ file: file() });
    try {
      const a = makeJob();
      const results = await Promise.allSettled([store.insert(a), store.insert(a), store.insert(makeJob())]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(String((results[1] as PromiseRejectedResult).reason)).toContain('duplicate job id');
      expect(await store.queueDepth('ep')).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('keeps jobs, queue order, counters and streams across a reopen', async () => {
    const f = file();
    let store = new SqliteStore({ file: f, durability: 'full' });
    const jobs = Array.from({ length: 5 }, (_, i) => makeJob({ endpointId: 'keep', input: { i } }));
    for (const j of jobs) await store.insert(j);
    const running = must(await store.claim('keep', 'w1', T0 + 1));
    await store.appendStream(running.id, running.attempt, 0, ['a', 'b']);
    const done = must(await store.claim('keep', 'w1', T0 + 2));
    await store.finish(done.id, done.attempt, COMPLETE, T0 + 3, RETENTION);
    await store.close();

    store = new SqliteStore({ file: f, durability: 'full' });
    try {
      expect(await store.counts('keep')).toEqual({ completed: 1, failed: 0, inProgress: 1, inQueue: 3, retried: 0 });
      expect(await store.takeStream(running.id)).toEqual(['a', 'b']);
      expect((await store.get(done.id))?.output).toEqual(COMPLETE.status === 'COMPLETED' ? COMPLETE.output : undefined);
      await store.insert(makeJob({ endpointId: 'keep', input: { i: 5 } }));
      const order: unknown[] = [];
      for (let job; (job = await store.claim('keep', 'w2', T0 + 4)); ) order.push(job.input['i']);
      expect(order).toEqual([2, 3, 4, 5]); // FIFO continues after the reopen
      expect(await store.recover(T0 + 60_000)).toEqual({ queued: 0, running: 5, endpoints: ['keep'] });
    } finally {
      await store.close();
    }
  });

  it('upgrades a database of an older schema in place (migration 2 adds the cost column, 3 the job logs, 4 changes indexes, 5 the big-input table, 6 the batches)', async () => {
    const f = file();
    const first = new SqliteStore({ file: f });
    const job = makeJob();
    await first.insert(job);
    await first.close();
    const raw = new BetterSqlite3(f);
    // Back to schema 1: migration 4's indexes as 1 made them, 3's additions and 2's column dropped.
    raw.exec(`DROP INDEX jobs_in_progress;
      CREATE INDEX jobs_running ON jobs (worker_id) WHERE status = 'IN_PROGRESS';
      CREATE INDEX jobs_execution_deadline ON jobs (execution_deadline) WHERE execution_deadline IS NOT NULL;`);
    raw.exec(
      'DROP INDEX jobs_recent; DROP TABLE job_logs; ALTER TABLE jobs DROP COLUMN log_len; ALTER TABLE jobs DROP COLUMN log_dropped',
    );
    raw.exec('ALTER TABLE jobs DROP COLUMN cost');
    raw.exec('DROP TRIGGER jobs_drop_input; DROP TABLE job_inputs');
    raw.exec(
      'DROP INDEX jobs_batch; DROP INDEX jobs_batch_status; ALTER TABLE jobs DROP COLUMN batch_id; DROP TABLE batches',
    );
    raw.pragma('user_version = 1');
    raw.close();
    const again = new SqliteStore({ file: f });
    try {
      expect(again.db.pragma('user_version', { simple: true })).toBe(6);
      const indexes = again.db
        .prepare(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'jobs'`)
        .all();
      expect(indexes.map((r) => (r as { name: string }).name)).toContain('jobs_in_progress');
      expect((await again.get(job.id))?.id).toBe(job.id);
      await again.insert(makeJob({ cost: 1.5 }));
      expect(
        await again.appendLogs(job.id, [
          { at: 1, level: 'info', message: 'after the upgrade', workerId: 'w', attempt: 1 },
        ]),
      ).toBe(1);
      expect((await again.recent(job.endpointId, 10)).length).toBe(2);
      const big = makeJob({ input: { s: 'x'.repeat(70_000) } });
      await again.insert(big);
      expect((await again.get(big.id))?.input).toEqual(big.input);
      await again.batches.createBatch(
        { id: 'batch_up', endpointId: 'ep', status: 'DRAFT', createdAt: 1, total: 0 },
        [makeJob()],
        { maxQueued: 10, maxOpen: 10 },
      );
      expect(await again.batches.batchCounts('batch_up')).toMatchObject({ queued: 1 });
    } finally {
      await again.close();
    }
  });

  it('refuses a database written by a newer schema', async () => {
    const f = file();
    const raw = new BetterSqlite3(f);
    raw.pragma('user_version = 999');
    raw.close();
    expect(() => new SqliteStore({ file: f })).toThrow(/newer than this Berth/);
  });

  it('refuses a data file another live control plane holds (naming its pid), and takes it at once after that process is killed', async () => {
    const f = file();
    const { spawn } = await import('node:child_process');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${f}.lock`, String(process.ppid)); // an old-style pid file naming a live, unrelated process: ignored
    const url = new URL('./data-lock.ts', import.meta.url).pathname;
    const holder = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import { DataLock } from ${JSON.stringify(url)}; DataLock.acquire(${JSON.stringify(f)}); console.log('held'); setTimeout(() => {}, 30000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise((r) => holder.stdout!.once('data', r));
      expect(() => new SqliteStore({ file: f })).toThrow(
        new RegExp(`in use by another Berth control plane \\(pid ${holder.pid}\\)`),
      );
    } finally {
      holder.kill('SIGKILL');
      await new Promise((r) => holder.once('exit', r));
    }
    const store = new SqliteStore({ file: f }); // the owner is gone: the OS released its lock
    await store.insert(makeJob());
    expect(() => new SqliteStore({ file: f })).toThrow(/in use by another Berth control plane/); // also within one process
    await store.close();
    const again = new SqliteStore({ file: f }); // released by close()
    await again.close();
  });

  it('uses WAL and the chosen synchronous level', async () => {
    const normal = new SqliteStore({ file: file() });
    const full = new SqliteStore({ file: file(), durability: 'full' });
    try {
      expect(normal.db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(normal.db.pragma('synchronous', { simple: true })).toBe(1);
      // full: SQLite writes the WAL (NORMAL) and the store fsyncs it off the event loop before answering.
      expect(full.db.pragma('synchronous', { simple: true })).toBe(1);
      await normal.insert(makeJob());
      expect(normal.walSyncs).toBe(0);
      const syncsBefore = full.walSyncs;
      await full.insert(makeJob());
      expect(full.walSyncs).toBeGreaterThan(syncsBefore);
      const mem = new SqliteStore({ file: ':memory:', durability: 'full' }); // no WAL file: SQLite's own FULL
      expect(mem.db.pragma('synchronous', { simple: true })).toBe(2);
      await mem.close();
    } finally {
      await normal.close();
      await full.close();
    }
  });

  it('durability full: every write and read settles only after an fsync of the WAL that began after its commit', async () => {
    const store = new SqliteStore({ file: file(), durability: 'full' });
    try {
      const settledAfter: boolean[] = [];
      const pending: Promise<void>[] = [];
      // Writes over several event-loop turns, so later batches commit while earlier ones are being synced.
      for (let turn = 0; turn < 6; turn++) {
        for (let i = 0; i < 10; i++) {
          const syncsAtCommit = store.walSyncs; // this batch commits later, so its fsync completes later still
          pending.push(store.insert(makeJob()).then(() => void settledAfter.push(store.walSyncs > syncsAtCommit)));
        }
        const syncsAtRead = store.walSyncs;
        pending.push(store.counts('ep').then(() => void settledAfter.push(store.walSyncs > syncsAtRead)));
        await new Promise((r) => setImmediate(r));
      }
      await Promise.all(pending);
      expect(settledAfter).toHaveLength(66);
      expect(settledAfter.every(Boolean)).toBe(true);
      expect(store.walSyncs).toBeLessThanOrEqual(store.commits);
    } finally {
      await store.close();
    }
  });

  it('durability full: a /runsync insert and a claim settle at their COMMIT; a /run insert and flush() wait for an fsync', async () => {
    const store = new SqliteStore({ file: file(), durability: 'full' });
    try {
      const syncs0 = store.walSyncs;
      await store.insert(makeJob({ sync: true }));
      must(await store.claim('ep', 'w1', T0));
      expect(store.walSyncs).toBe(syncs0); // nobody was told yet: no fsync waited for
      await store.flush();
      expect(store.walSyncs).toBe(syncs0 + 1);
      await store.insert(makeJob());
      expect(store.walSyncs).toBe(syncs0 + 2);
    } finally {
      await store.close();
    }
  });
});
