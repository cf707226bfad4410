/**
 * The PostgreSQL server every PostgreSQL target uses (BENCH_DATABASE_URL, default
 * postgres://root@127.0.0.1:5432/test): one-off statements, schema sizes and drops, and the CPU time of the backends
 * serving a target (found by `application_name`), which shares the machine's cores with everything else measured.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { REPO_ROOT, totalCpuMs } from './proc.js';

export const DATABASE_URL = process.env['BENCH_DATABASE_URL'] ?? 'postgres://root@127.0.0.1:5432/test';

type PgClient = {
  connect(): Promise<void>;
  query(sql: string): Promise<{ rows: { n: string }[] }>;
  end(): Promise<void>;
};

/** Runs `text` on a new connection and returns its rows (each query names its one column `n`). */
export async function sql(text: string): Promise<{ n: string }[]> {
  const { Client } = createRequire(join(REPO_ROOT, 'packages/server/package.json'))('pg') as {
    Client: new (o: { connectionString: string }) => PgClient;
  };
  const c = new Client({ connectionString: DATABASE_URL });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

/** Drops a bench schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/** Bytes the schema's tables take, their indexes and TOAST included. */
export async function schemaBytes(schema: string): Promise<number> {
  const rows =
    await sql(`SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::text AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
    WHERE s.nspname = '${schema}' AND c.relkind = 'r'`);
  return Number(rows[0]?.n ?? NaN);
}

/** CPU time (ms) so far of the backends whose connections carry `application_name` `app`. */
export async function backendCpuMs(app: string): Promise<number> {
  const rows = await sql(`SELECT pid::text AS n FROM pg_stat_activity WHERE application_name = '${app}'`);
  return totalCpuMs(rows.map((r) => Number(r.n)));
}

/** Whether the server answers, or why not. */
export async function pgUnavailable(): Promise<string | undefined> {
  try {
    await sql('SELECT 1 AS n');
    return undefined;
  } catch (err) {
    return `no PostgreSQL at ${DATABASE_URL}: ${err instanceof Error ? err.message : String(err)}`;
  }
}
