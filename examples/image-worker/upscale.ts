import { start } from '@berth/worker';
import { createUpscaleHandler } from './src/handlers/upscale.js';
import { configureModels, createImageUpscaler } from './src/setup.js';

// 2x / 4x super-resolution with ESRGAN: $BERTH_MODELS_DIR/esrgan-x2|x4, $UPSCALER_X2_MODEL|X4, or hub defaults.
start({ handler: createUpscaleHandler({ upscaler: createImageUpscaler(configureModels()) }) });
