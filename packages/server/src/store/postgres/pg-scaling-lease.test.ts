import { describe, expect, it } from 'vitest';
import { PgStore } from './pg-store.js';
import { dropSchema, PG_TEST_URL, pgUnavailable, testSchema } from './pg-test-db.test-helpers.js';

// Two PgStore instances on one schema stand for two replicas of one deployment.
const skip = await pgUnavailable();

describe.skipIf(skip !== undefined)(`Store.scalingLease on PostgreSQL${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('one replica holds a name at a time; the other takes it once the holder gives it back; names are separate', async () => {
    const schema = testSchema();
    const a = await PgStore.open({ url: PG_TEST_URL, schema, poolSize: 2 });
    const b = await PgStore.open({ url: PG_TEST_URL, schema, poolSize: 2 });
    try {
      const la = a.scalingLease('berth');
      const lb = b.scalingLease('berth');
      expect(await la.held()).toBe(true);
      expect(await lb.held()).toBe(false);
      expect(await la.held()).toBe(true);
      // Another deployment (another --scale-name) on the same database has a lease of its own.
      const other = b.scalingLease('staging');
      expect(await other.held()).toBe(true);
      await la.close();
      expect(await lb.held()).toBe(true);
      expect(await la.held()).toBe(false);
      await Promise.all([la.close(), lb.close(), other.close()]);
    } finally {
      await a.close();
      await b.close();
      await dropSchema(schema);
    }
  });
});
