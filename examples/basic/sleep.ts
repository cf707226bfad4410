import { setTimeout as sleep } from 'node:timers/promises';
import { start, type Job } from '@berth/worker';

// Waits `ms` milliseconds (default 1000), reporting progress as it goes. Cancel, executionTimeout and ttl
// abort job.signal: the pending sleep() then throws and the handler stops at once.
start({
  async handler(job: Job<{ ms?: number }>) {
    const { ms = 1000 } = job.input;
    if (typeof ms !== 'number' || !(ms >= 0)) throw new Error('input.ms must be a number of milliseconds');
    const started = Date.now();
    job.signal.addEventListener('abort', () => job.log.info(`aborted after ${Date.now() - started} ms`));
    for (let elapsed = 0; elapsed < ms; elapsed = Date.now() - started) {
      await sleep(Math.min(250, ms - elapsed), undefined, { signal: job.signal });
      job.progress({ percent: Math.min(100, Math.round(((Date.now() - started) / ms) * 100)) });
    }
    return { slept: ms };
  },
});
