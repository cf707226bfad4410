import { start } from '@berth/worker';
import { handler } from './handler.js';
import { loadDiffusion } from './model.js';

// Load the model before the first job: a worker only connects once it can serve.
await loadDiffusion();
start({ handler });
