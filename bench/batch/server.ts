// The control plane of the batch run (./run-batch.ts) and of the batch-lane run (../batch-lane.ts): createServer() on
// a SQLite file or a PostgreSQL schema, as `berth serve` builds it, with the batch limits raised to the run's size;
// with BATCH_LANE=1, a batch lane on `echo` whose lane worker is `lane-1` (what berth dev's Fleet tells the server).
// It answers its RSS and V8 heap in use over IPC ({ rss: true }, after a GC with `gc`).
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
if (process.env['BATCH_LANE'] === '1') {
  server.workers.setBatchLane('echo', true);
  server.workers.setLane('lane-1', 'batch');
}
await server.listen({ port: Number(process.env['PORT']), host: '127.0.0.1' });

process.on('message', (m: { rss?: boolean; gc?: boolean }) => {
  if (typeof m !== 'object' || m === null || !m.rss) return;
  if (m.gc) (globalThis as { gc?: () => void }).gc?.();
  const mem = process.memoryUsage();
  process.send?.({ rssBytes: mem.rss, heapBytes: mem.heapUsed });
});
process.stdout.write('listening\n');
