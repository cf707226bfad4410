import { describe, expect, it } from 'vitest';
import { dropSchema, PG_TEST_URL, pgUnavailable, testSchema } from '../store/postgres/pg-test-db.test-helpers.js';
import { createApiKey } from './create-key.js';
import { hashApiKey } from './key-format.js';
import { PgKeyStore } from './pg-key-store.js';

const skip = await pgUnavailable();

describe.skipIf(skip !== undefined)(`PgKeyStore${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('stores only the hash, lists in order, revokes once, and two replicas (pools) see the same keys', async () => {
    const schema = testSchema();
    const a = await PgKeyStore.open({ url: PG_TEST_URL, schema });
    const b = await PgKeyStore.open({ url: PG_TEST_URL, schema });
    try {
      const k1 = await createApiKey(a, { name: 'ci', endpoints: ['echo'], now: 1 });
      const k2 = await createApiKey(a, { readOnly: true, now: 2 });
      const listed = await b.list();
      expect(listed.map((k) => k.id)).toEqual([k1.key.id, k2.key.id]);
      expect(listed[0]).toEqual({
        id: k1.key.id,
        name: 'ci',
        hash: hashApiKey(k1.secret),
        endpoints: ['echo'],
        readOnly: false,
        kind: 'api',
        createdAt: 1,
        revokedAt: null,
      });
      expect(listed[1]).toMatchObject({ endpoints: null, readOnly: true });
      expect(JSON.stringify(listed)).not.toContain(k1.secret.slice(22));
      expect(await b.revoke(k1.key.id, 5)).toBe(true);
      expect(await a.revoke(k1.key.id, 6)).toBe(false);
      expect(await a.revoke('nope', 6)).toBe(false);
      expect((await a.get(k1.key.id))?.revokedAt).toBe(5);
      await expect(a.insert(k2.key)).rejects.toThrow(/duplicate key id/);
    } finally {
      await a.close();
      await b.close();
      await dropSchema(schema);
    }
  });
});
