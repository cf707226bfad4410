// The peer's worker process: a BullMQ Worker, concurrency 64, the same no-op echo as every target.
import { Worker } from 'bullmq';
import { echo, released } from '../../lib/noop.js';

await released();
const worker = new Worker('echo', async (job) => echo((job.data as { input: unknown }).input), {
  connection: { host: '127.0.0.1', port: Number(process.env['REDIS_PORT']) },
  concurrency: 64,
});
await worker.waitUntilReady();
