import { setTimeout as sleep } from 'node:timers/promises';
import { start, type Job } from '@berth/worker';

// Streams `chunks` chunks (default 5), `delayMs` apart (default 100). Read them from /stream/<id> while the
// job runs; with return_aggregate_stream the job's final output is the list of all chunks.
start({
  return_aggregate_stream: true,
  async *handler(job: Job<{ chunks?: number; delayMs?: number }>) {
    const { chunks = 5, delayMs = 100 } = job.input;
    for (let i = 0; i < chunks; i++) {
      if (i > 0) await sleep(delayMs, undefined, { signal: job.signal }); // throws once the job is cancelled
      yield { index: i, text: `chunk ${i}` };
    }
  },
});
