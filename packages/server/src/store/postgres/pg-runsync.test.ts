import { describe, expect, it } from 'vitest';
import { call, testServer } from '../../testing.test-helpers.js';
import { openTestPgStore, pgUnavailable } from './pg-test-db.test-helpers.js';

const skip = await pgUnavailable();

describe.skipIf(skip !== undefined)(
  `/runsync on PostgreSQL (asynchronous insert)${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    it('a /runsync whose wait elapses first is flushed, then answered with the stored job, which stays', async () => {
      const store = await openTestPgStore();
      let flushes = 0;
      const flush = store.flush.bind(store);
      store.flush = async () => {
        flushes++;
        await flush();
      };
      const s = testServer({ store });
      try {
        const r = await call(s, 'POST', '/v2/echo/runsync?wait=1000', { body: { input: { n: 1 } } });
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ status: 'IN_QUEUE' });
        expect(flushes).toBe(1);
        expect((await call(s, 'GET', `/v2/echo/status/${r.body.id}`)).body.status).toBe('IN_QUEUE');
      } finally {
        await s.close({ drainMs: 0 });
      }
    });
  },
);
