import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { loadPg } from '../../packages/server/src/store/postgres/connect.js';
import {
  dropSchema,
  pgUnavailable,
  testSchema,
} from '../../packages/server/src/store/postgres/pg-test-db.test-helpers.js';
import { killAll, startServe, type ServeProcess } from './cluster.test-helpers.js';

export { classify } from './cluster.test-helpers.js';

/**
 * What a replica test file needs: whether PostgreSQL is there (`skip` says why not), a scratch folder and its own
 * schema. After the file's tests every process it started is killed, the folder removed and the schema dropped.
 */
export async function replicaFixture(name: string): Promise<{ skip: string | undefined; dir: string; schema: string }> {
  const skip = await pgUnavailable();
  const dir = mkdtempSync(join(tmpdir(), `berth-${name}-`));
  const schema = testSchema();
  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
    if (!skip) await dropSchema(schema);
  });
  return { skip, dir, schema };
}

export {
  PG_TEST_URL,
  pgUnavailable,
  testSchema,
  dropSchema,
} from '../../packages/server/src/store/postgres/pg-test-db.test-helpers.js';

/**
 * A tiny TCP round-robin load balancer (what nginx or HAProxy do in front of replicas): each new connection goes
 * to the next backend; a backend that refuses is skipped. WebSocket upgrades pass through like any TCP stream.
 */
export async function roundRobinProxy(
  backends: number[],
): Promise<{ port: number; url: string; close(): Promise<void> }> {
  let next = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.pause();
    const tryBackend = (left: number) => {
      if (left === 0) return client.destroy();
      const port = backends[next++ % backends.length]!;
      const upstream = connect(port, '127.0.0.1');
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      upstream.once('error', () => {
        if (!upstream.readyState.startsWith('open')) tryBackend(left - 1);
        else client.destroy();
      });
      upstream.once('connect', () => {
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.pipe(upstream).pipe(client);
        client.resume();
        upstream.on('close', () => client.destroy());
        client.on('close', () => upstream.destroy());
      });
    };
    tryBackend(backends.length);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Starts `berth serve --store postgres` replicas on one schema (data dirs only hold output files). */
export async function startReplicas(
  n: number,
  url: string,
  schema: string,
  dataDir: string,
  extra: string[] = [],
): Promise<{ serves: ServeProcess[]; ports: number[] }> {
  const serves = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      startServe(0, `${dataDir}/r${i}`, [
        '--store',
        'postgres',
        '--database-url',
        url,
        '--database-schema',
        schema,
        ...extra,
      ]),
    ),
  );
  return { serves, ports: serves.map((s) => s.port) };
}

/** Terminates every connection Berth has open on this schema (pool and LISTEN), as a database failover would. */
export async function terminateBerthConnections(url: string, schema: string): Promise<number> {
  const { Client } = loadPg();
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()`,
      [`berth:${schema}`],
    );
    return r.rowCount ?? 0;
  } finally {
    await c.end();
  }
}

/** A TCP proxy in front of PostgreSQL that can go down (every connection reset, new ones refused) and come back. */
export async function downableProxy(
  targetPort: number,
): Promise<{ port: number; down(): void; up(): void; close(): Promise<void> }> {
  let isDown = false;
  const pairs = new Set<Socket>();
  const server = createServer((client) => {
    client.on('error', () => {});
    if (isDown) return void client.destroy();
    const upstream = connect(targetPort, '127.0.0.1');
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    pairs.add(client);
    client.on('close', () => pairs.delete(client));
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    down() {
      isDown = true;
      for (const c of pairs) c.destroy();
    },
    up() {
      isDown = false;
    },
    close: async () => {
      for (const c of pairs) c.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
