import { start } from '@berth/worker';

// Answers every job with its own input.
start({ handler: (job) => job.input });
