// Text-to-video speed and sizes on tiny-sd (BERTH_MODELS_DIR): seconds per frame against one text-to-image call
// with the same settings (the interpolation overhead), encode time and size of mp4 and webp, measured in this run.
// Run: BERTH_MODELS_DIR=../../../shared/models node --import tsx scripts/bench-video.ts
import { join, resolve } from 'node:path';
import { generateImage } from '../src/pipeline/generate.js';
import { loadDiffusionModel } from '../src/pipeline/load.js';
import { encodeVideo } from '../src/video/encode-video.js';
import { generateFrames } from '../src/video/frames.js';

const dir = join(
  process.env['BERTH_MODELS_DIR'] ?? resolve(import.meta.dirname, '../../../../shared/models'),
  'tiny-sd',
);
const model = await loadDiffusionModel(dir);
const prompt = 'a big red circle on a blue background';
const promptEnd = 'a big red circle on a green background';
const seconds = (t: number) => (performance.now() - t) / 1000;
await generateImage(model, { prompt, width: 64, height: 64, steps: 2, guidance: 5, seed: 0 }); // warm up

console.log(
  'size   steps  frames  s_per_frame  s_per_image  ratio  mp4_bytes  mp4_encode_s  webp_bytes  webp_encode_s',
);
for (const [size, steps, frames] of [
  [64, 2, 8],
  [64, 20, 8],
  [128, 2, 8],
] as const) {
  let t = performance.now();
  const images = await generateFrames(model, {
    prompt,
    promptEnd,
    frames,
    width: size,
    height: size,
    steps,
    guidance: 5,
    seed: 1,
    seedEnd: 2,
  });
  const perFrame = seconds(t) / frames;
  t = performance.now();
  for (let i = 0; i < 3; i++)
    await generateImage(model, { prompt, width: size, height: size, steps, guidance: 5, seed: i });
  const perImage = seconds(t) / 3;
  t = performance.now();
  const mp4 = await encodeVideo(images, 8, 'mp4');
  const mp4s = seconds(t);
  t = performance.now();
  const webp = await encodeVideo(images, 8, 'webp');
  const webps = seconds(t);
  console.log(
    [
      `${size}x${size}`,
      steps,
      frames,
      perFrame.toFixed(4),
      perImage.toFixed(4),
      (perFrame / perImage).toFixed(2),
      mp4.length,
      mp4s.toFixed(3),
      webp.length,
      webps.toFixed(3),
    ].join('  '),
  );
}
