import { start } from '@berth/worker';
import { handler } from './handler.js';
import { loadGenerator } from './model.js';

// Load the model before the first job: a worker only connects once it can serve (a cold start shows as
// delayTime). Chunks are also returned as the job's output (return_aggregate_stream).
await loadGenerator();
start({ handler, return_aggregate_stream: true });
