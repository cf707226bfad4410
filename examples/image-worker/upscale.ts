import { start } from '@berth/worker';
import { exitOnProblems, MODELS_HINT, modelProblems } from './src/startup/checks.js';
import { createBatchUpscaleHandler } from './src/handlers/upscale-batch.js';
import { configureModels, createImageUpscaler } from './src/setup.js';

// 2x / 4x super-resolution with ESRGAN: $BERTH_MODELS_DIR/esrgan-x2|x4, $UPSCALER_X2_MODEL|X4, or hub defaults.
// Batched: up to 8 jobs per call, their 64x64 tiles sharing forward passes (docs/batching.md); a lone job on an
// idle worker starts at once. BERTH_BATCH_MAX_SIZE / BERTH_BATCH_MAX_WAIT_MS override the settings.
const where = configureModels();
exitOnProblems('upscale worker', modelProblems(where, { upscale: true }), MODELS_HINT);
start({
  batch: { maxSize: 8, maxWaitMs: 10 },
  handler: createBatchUpscaleHandler({ upscaler: createImageUpscaler(where) }),
});
