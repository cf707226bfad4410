import { createServer, silentLogger } from '@berth/server';
import { PgKeyStore, PgStore } from '@berth/server/postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { runBerth } from '../../packages/cli/src/internal/run-berth.test-helpers.js';
import { dropSchema, PG_TEST_URL, pgUnavailable, testSchema } from './replicas.test-helpers.js';

const skip = await pgUnavailable();
const schema = testSchema();
afterAll(async () => {
  if (!skip) await dropSchema(schema);
});

const berth = (...argv: string[]) => runBerth(argv, { BERTH_STORE: 'postgres', BERTH_DATABASE_URL: PG_TEST_URL }, '/');

describe.skipIf(skip !== undefined)(`berth keys on PostgreSQL${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('a key created with berth keys works on every replica at once, and a revocation applies to all', async () => {
    const created = await berth('keys', 'create', '--name', 'fleet', '--database-schema', schema);
    expect(created.code).toBe(0);
    expect(created.err).toContain(`(schema ${schema})`);
    const secret = created.out.trim();
    const replicas = await Promise.all(
      [0, 1].map(async () => {
        const store = await PgStore.open({ url: PG_TEST_URL, schema, poolSize: 2 });
        return createServer({
          store,
          keyStore: PgKeyStore.on(store.pool),
          endpoints: ['echo'],
          logger: silentLogger,
          sweepIntervalMs: 0,
          cluster: false,
        });
      }),
    );
    const health = (i: number) =>
      replicas[i]!.handle({
        method: 'GET',
        path: '/v2/echo/health',
        query: new URLSearchParams(),
        headers: { authorization: `Bearer ${secret}` },
      });
    try {
      expect((await health(0)).status).toBe(200);
      expect((await health(1)).status).toBe(200);
      const id = secret.slice(9, 21);
      expect((await berth('keys', 'revoke', id, '--database-schema', schema)).code).toBe(0);
      expect((await health(0)).status).toBe(401);
      expect((await health(1)).status).toBe(401);
      const list = await berth('keys', 'list', '--database-schema', schema);
      expect(list.out).toContain(id);
      expect((await berth('keys', 'list', '--store', 'postgres', '--database-url', '')).code).not.toBe(0);
    } finally {
      await Promise.all(replicas.map((r) => r.close({ drainMs: 0 })));
    }
  });
});
