import { start, type Job } from '@berth/worker';

// Always fails, to show FAILED jobs, their `error`, and POST /retry.
start({
  handler(job: Job<{ message?: string }>) {
    throw new Error(job.input.message ?? 'failed on purpose');
  },
});
