import { describe, expect, it } from 'vitest';
import type { Store } from '../store/types.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { openTestPgStore, pgUnavailable } from '../store/postgres/pg-test-db.test-helpers.js';
import { call, ScriptedWorker, listening, testServer } from '../testing.test-helpers.js';

const skipPg = await pgUnavailable();
const STORES: [string, () => Promise<Store>, string | undefined][] = [
  ['memory', async () => new MemoryStore(), undefined],
  ['SQLite', async () => new SqliteStore({ file: ':memory:' }), undefined],
  ['PostgreSQL', () => openTestPgStore(), skipPg],
];

const KEY = { 'idempotency-key': 'order-42' };

describe.each(STORES)('Idempotency-Key on %s', (_name, makeStore, skip) => {
  it.skipIf(skip !== undefined)(
    `the same key answers the same job; another body is refused with 409; scoped per API key and route${skip ? ` (skipped: ${skip})` : ''}`,
    async () => {
      const s = testServer({ store: await makeStore(), apiKeys: ['test-key', 'other-key'] });
      try {
        const first = await call(s, 'POST', '/v2/echo/run', { body: { input: { n: 1 } }, headers: KEY });
        expect(first.status).toBe(200);
        const again = await call(s, 'POST', '/v2/echo/run', { raw: '{"input":{"n":1}}', headers: KEY });
        expect(again.body).toEqual({ id: first.body.id, status: 'IN_QUEUE' });
        const other = await call(s, 'POST', '/v2/echo/run', { body: { input: { n: 2 } }, headers: KEY });
        expect(other.status).toBe(409);
        expect(other.body).toMatchObject({ code: 'idempotency_key_reused', details: { jobId: first.body.id } });
        // Another API key, another route, or no key: new jobs.
        const otherKey = await call(s, 'POST', '/v2/echo/run', {
          body: { input: { n: 1 } },
          headers: { ...KEY, authorization: 'Bearer other-key' },
        });
        const sync = await call(s, 'POST', '/v2/echo/runsync?wait=1000', { body: { input: { n: 1 } }, headers: KEY });
        const none = await call(s, 'POST', '/v2/echo/run', { body: { input: { n: 1 } } });
        const ids = new Set([first.body.id, otherKey.body.id, sync.body.id, none.body.id]);
        expect(ids.size).toBe(4);
        expect((await call(s, 'GET', '/v2/echo/health')).body.jobs.inQueue).toBe(4);
        const bad = await call(s, 'POST', '/v2/echo/run', {
          body: { input: {} },
          headers: { 'idempotency-key': 'x'.repeat(256) },
        });
        expect([bad.status, bad.body.code]).toEqual([400, 'invalid_request']);
      } finally {
        await s.close({ drainMs: 0 });
      }
    },
  );

  it.skipIf(skip !== undefined)(
    'concurrent submits with one key make one job; a /runsync retry waits for and answers its result',
    async () => {
      await using t = await listening({ store: await makeStore() });
      const w = await ScriptedWorker.connect(t.url);
      await w.next('welcome');
      const sends = Array.from({ length: 5 }, () =>
        call(t.server, 'POST', '/v2/echo/runsync?wait=5000', { body: { input: { v: 'x' } }, headers: KEY }),
      );
      const assign = await w.next('job.assign');
      w.send({ type: 'job.complete', id: assign.id, attempt: assign.attempt, output: { ok: 1 } });
      const answers = await Promise.all(sends);
      for (const a of answers) expect(a.body).toMatchObject({ id: assign.id, status: 'COMPLETED', output: { ok: 1 } });
      expect((await call(t.server, 'GET', '/v2/echo/health')).body.jobs).toMatchObject({
        completed: 1,
        inQueue: 0,
        inProgress: 0,
      });
      const late = await call(t.server, 'POST', '/v2/echo/runsync', { body: { input: { v: 'x' } }, headers: KEY });
      expect(late.body).toMatchObject({ id: assign.id, status: 'COMPLETED' });
      await w.close();
    },
  );
});
