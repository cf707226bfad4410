import { randomBytes } from 'node:crypto';
import { loadPg } from './connect.js';
import { PgStore, type PgStoreOptions } from './pg-store.js';

/** The test database: `BERTH_TEST_DATABASE_URL`, default the local server's database `test`. */
export const PG_TEST_URL =
  process.env['BERTH_TEST_DATABASE_URL'] ?? `postgres://${process.env['PGUSER'] ?? 'root'}@127.0.0.1:5432/test`;

/** Why PostgreSQL tests are skipped (no server reachable), or `undefined` when they can run. */
export async function pgUnavailable(url = PG_TEST_URL): Promise<string | undefined> {
  const { Client } = loadPg();
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return undefined;
  } catch (err) {
    return `no PostgreSQL at ${url} (${err instanceof Error ? err.message : String(err)}); set BERTH_TEST_DATABASE_URL`;
  } finally {
    await c.end().catch(() => {});
  }
}

/** A fresh schema name, so parallel test files (and tests) never share tables. */
export const testSchema = (): string => `berth_test_${randomBytes(6).toString('hex')}`;

/** Drops a test schema and everything in it. */
export async function dropSchema(schema: string, url = PG_TEST_URL): Promise<void> {
  const { Client } = loadPg();
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await c.end();
  }
}

/** A `PgStore` in its own new schema; closing it drops the schema. */
export async function openTestPgStore(o: Partial<PgStoreOptions> = {}): Promise<PgStore> {
  const schema = o.schema ?? testSchema();
  const store = await PgStore.open({ url: PG_TEST_URL, poolSize: 4, ...o, schema });
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    await dropSchema(schema);
  };
  return store;
}
