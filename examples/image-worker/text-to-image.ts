import { start } from '@berth/worker';
import { exitOnProblems, MODELS_HINT, modelProblems } from './src/startup/checks.js';
import { createTextToImageHandler } from './src/handlers/text-to-image.js';
import { configureModels, createImageUpscaler, loadImageModel } from './src/setup.js';

// Text-to-image on an ONNX Stable Diffusion folder: $BERTH_MODELS_DIR/tiny-sd, $IMAGE_MODEL, or the hub default.
const where = configureModels();
// Checked before connecting: a worker without its models must not look healthy and fail every job.
exitOnProblems('image worker', modelProblems(where, { image: true, upscale: true }), MODELS_HINT);
start({
  handler: createTextToImageHandler({
    loadModel: (log) => loadImageModel(where, (msg, fields) => log.info(msg, fields)),
    upscaler: createImageUpscaler(where),
  }),
});
