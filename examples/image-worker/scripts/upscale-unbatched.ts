// The upscaler without batching (one job per model call, concurrency 1): the baseline of scripts/bench-batch.ts.
import { start } from '@berth/worker';
import { createUpscaleHandler } from '../src/handlers/upscale.js';
import { configureModels, createImageUpscaler } from '../src/setup.js';

start({ handler: createUpscaleHandler({ upscaler: createImageUpscaler(configureModels()) }) });
