import { start } from '@berth/worker';
import { configureModels, loadImageModel } from './src/setup.js';
import { createTextToVideoHandler } from './src/video/handler.js';

// Short clips from the text-to-image pipeline (tiny-sd from $BERTH_MODELS_DIR, $IMAGE_MODEL, or the hub default):
// frames interpolated between two prompts and/or seeds, encoded as H.264 MP4 (ffmpeg) or animated WebP (sharp).
const where = configureModels();
start({ handler: createTextToVideoHandler({ loadModel: (log) => loadImageModel(where, (msg, fields) => log.info(msg, fields)) }) });
