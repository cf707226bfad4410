// The Berth worker process: the real @berth/worker runtime with the same no-op logic as every target.
import { start, type Job } from '@berth/worker';
import { chunks, echo, released, type StreamInput } from '../../lib/noop.js';

await released();
if (process.env['BERTH_ENDPOINT_ID'] === 'stream') {
  start({
    concurrency: 64,
    async *handler(job: Job<StreamInput>) {
      yield* chunks(job.input);
    },
  });
} else {
  start({ concurrency: 64, handler: (job) => echo(job.input) as Record<string, unknown> });
}
