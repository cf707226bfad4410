import { start } from '@berth/worker';
import { batchHandler } from './handler.js';
import { loadDiffusion } from './model.js';

// Load the model before the first job: a worker only connects once it can serve.
await loadDiffusion();
// Batched: up to 4 jobs of the same size and step count share each UNet pass; a lone job on an idle worker starts
// at once, under load a batch waits up to 10 ms for more (docs/batching.md in the Berth repository).
start({ batch: { maxSize: 4, maxWaitMs: 10 }, handler: batchHandler });
