import { start } from '@berth/worker';
import { createTextToImageHandler } from './src/handlers/text-to-image.js';
import { configureModels, createImageUpscaler, loadImageModel } from './src/setup.js';

// Text-to-image on an ONNX Stable Diffusion folder: $BERTH_MODELS_DIR/tiny-sd, $IMAGE_MODEL, or the hub default.
const where = configureModels();
start({
  handler: createTextToImageHandler({
    loadModel: (log) => loadImageModel(where, (msg, fields) => log.info(msg, fields)),
    upscaler: createImageUpscaler(where),
  }),
});
