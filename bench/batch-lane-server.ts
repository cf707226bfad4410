// The batch-lane run's control plane (./batch-lane.ts): ./batch/server.ts's SQLite control plane, plus, with
// BATCH_LANE=1, a batch lane on `echo` whose lane worker is `lane-1` (what berth dev's Fleet tells the server).
import { join } from 'node:path';
import { createServer, silentLogger } from '@berth/server';
import { SqliteStore } from '@berth/server/sqlite';

const jobs = Number(process.env['BATCH_JOBS']);
const server = createServer({
  store: new SqliteStore({ file: join(process.env['BATCH_DIR']!, 'berth.sqlite') }),
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
  process.send?.({ rssBytes: process.memoryUsage().rss });
});
process.stdout.write('listening\n');
