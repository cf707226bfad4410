// The batch run's control plane (./run-batch.ts): createServer() on a SQLite file or a PostgreSQL schema, as `berth serve` builds it, with
// the batch limits raised to the run's size; it answers its RSS and V8 heap in use over IPC ({ rss: true }, after a GC with `gc`).
import { join } from 'node:path';
import { createServer, silentLogger } from '@berth/server';
import { SqliteStore } from '@berth/server/sqlite';
import { PgStore } from '@berth/server/postgres';

const jobs = Number(process.env['BATCH_JOBS']);
const server = createServer({
  store:
    process.env['BATCH_STORE'] === 'postgres'
      ? await PgStore.open({ url: process.env['DATABASE_URL']!, schema: process.env['BATCH_SCHEMA']! })
      : new SqliteStore({ file: join(process.env['BATCH_DIR']!, 'berth.sqlite') }),
  apiKeys: [process.env['BATCH_KEY']!],
  workerTokens: [process.env['BATCH_TOKEN']!],
  endpoints: ['echo'],
  logger: silentLogger,
  rateLimits: { enabled: false },
  batches: { maxQueued: jobs + 1000, maxPerCall: 10_000 },
});
await server.listen({ port: Number(process.env['PORT']), host: '127.0.0.1' });

process.on('message', (m: { rss?: boolean; gc?: boolean }) => {
  if (typeof m !== 'object' || m === null || !m.rss) return;
  if (m.gc) (globalThis as { gc?: () => void }).gc?.();
  const mem = process.memoryUsage();
  process.send?.({ rssBytes: mem.rss, heapBytes: mem.heapUsed });
});
process.stdout.write('listening\n');
