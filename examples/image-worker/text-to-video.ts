import { start } from '@berth/worker';
import { commandProblem, exitOnProblems, MODELS_HINT, modelProblems } from './src/startup/checks.js';
import { configureModels, loadImageModel } from './src/setup.js';
import { createTextToVideoHandler } from './src/video/handler.js';

// Short clips from the text-to-image pipeline (tiny-sd from $BERTH_MODELS_DIR, $IMAGE_MODEL, or the hub default):
// frames interpolated between two prompts and/or seeds, encoded as H.264 MP4 (ffmpeg) or animated WebP (sharp).
const where = configureModels();
// Checked before connecting: models readable, and ffmpeg for MP4 (the default format; WebP needs only sharp).
const ffmpeg = commandProblem(process.env['FFMPEG_BIN'] ?? 'ffmpeg');
exitOnProblems(
  'video worker',
  [
    ...modelProblems(where, { image: true }),
    ...(ffmpeg ? [`${ffmpeg} (MP4 needs it: apt-get install ffmpeg, or "apt": ["ffmpeg"] in berth.config.json)`] : []),
  ],
  MODELS_HINT,
);
start({
  handler: createTextToVideoHandler({
    loadModel: (log) => loadImageModel(where, (msg, fields) => log.info(msg, fields)),
  }),
});
