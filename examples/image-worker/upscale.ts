import { start } from '@berth/worker';
import { exitOnProblems, MODELS_HINT, modelProblems } from './src/startup/checks.js';
import { createUpscaleHandler } from './src/handlers/upscale.js';
import { configureModels, createImageUpscaler } from './src/setup.js';

// 2x / 4x super-resolution with ESRGAN: $BERTH_MODELS_DIR/esrgan-x2|x4, $UPSCALER_X2_MODEL|X4, or hub defaults.
const where = configureModels();
exitOnProblems('upscale worker', modelProblems(where, { upscale: true }), MODELS_HINT);
start({ handler: createUpscaleHandler({ upscaler: createImageUpscaler(where) }) });
