import { start } from '@berth/worker';
import { batchHandler } from './handler.js';
import { loadGenerator } from './model.js';

// Load the model before the first job: a worker only connects once it can serve (a cold start shows as
// delayTime). Batched: the prompts of up to 8 jobs share each decoding pass; a lone job on an idle worker starts at
// once, under load a batch waits up to 10 ms for more (docs/batching.md in the Berth repository). Each job streams
// its own chunks, and its output is the list of them.
await loadGenerator();
start({ batch: { maxSize: 8, maxWaitMs: 10 }, handler: batchHandler });
