// Figures for the image worker on the shared test models (prints numbers; not a timed test):
//   1. tiny-sd load time, and seconds per 64x64 image at 20 Euler steps, guidance 5 (median of N), with the
//      conditional and unconditional passes batched into one UNet call versus two calls (same run, interleaved);
//   2. ESRGAN load time and seconds per upscale, 128x128 -> 256x256 (x2) and -> 512x512 (x4) (median of N).
//
//   BERTH_MODELS_DIR=../../../shared/models node --import tsx scripts/bench.ts [--runs 7]
// (BERTH_MODELS_DIR defaults to ../shared/models next to the repository.)
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { RawImage } from '@huggingface/transformers';
import sharp from 'sharp';
import { encodeImage } from '../src/image/encode.js';
import { generateImage, type GenerateParams } from '../src/pipeline/generate.js';
import { loadDiffusionModel } from '../src/pipeline/load.js';
import { createUpscaler } from '../src/upscale/upscaler.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' }, threads: { type: 'string' } } });
const runs = Math.max(1, Number(values.runs));
// --threads N sets onnxruntime's intra-op threads for the diffusion sessions (default: onnxruntime's choice).
const threads = values.threads === undefined ? undefined : Number(values.threads);
const modelsDir =
  process.env['BERTH_MODELS_DIR'] ?? resolve(dirname(fileURLToPath(import.meta.url)), '../../../../shared/models');

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
// Wall-clock seconds, and CPU seconds of this process (all threads): the CPU figure moves less when other
// processes compete for the cores, the wall figure is what a client waits.
const cpu: number[] = [];
const seconds = async (fn: () => Promise<unknown>, cpuInto?: number[]): Promise<number> => {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const used = process.cpuUsage(c0);
  cpuInto?.push((used.user + used.system) / 1e6);
  return (performance.now() - t0) / 1000;
};
const f3 = (x: number) => x.toFixed(3);

console.log(
  `image-worker benchmark: ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${loadavg()[0]?.toFixed(2)}, node ${process.version}, ${runs} runs each, models in ${modelsDir}`,
);

// 1. Text to image.
const model = await loadDiffusionModel(
  join(modelsDir, 'tiny-sd'),
  threads
    ? { sessionOptions: { executionProviders: ['cpu'], graphOptimizationLevel: 'all', intraOpNumThreads: threads } }
    : {},
);
console.log(`tiny-sd load: ${f3(model.loadSeconds)} s${threads ? ` (${threads} intra-op threads)` : ''}`);
const params: GenerateParams = {
  prompt: 'a big red circle on a blue background',
  width: 64,
  height: 64,
  steps: 20,
  guidance: 5,
  seed: 1,
};
await generateImage(model, params); // warm-up
await generateImage(model, params, { batchGuidance: false });
const batched: number[] = [];
const separate: number[] = [];
const cpuSeparate: number[] = [];
for (let i = 0; i < runs; i++) {
  batched.push(await seconds(() => generateImage(model, { ...params, seed: i }), cpu));
  separate.push(
    await seconds(() => generateImage(model, { ...params, seed: i }, { batchGuidance: false }), cpuSeparate),
  );
}
const png = await seconds(async () => encodeImage(await generateImage(model, params), 'png'));
const mb = median(batched);
const ms = median(separate);
console.log(
  `text-to-image 64x64, 20 Euler steps, guidance 5: ${f3(mb)} s/image batched (min ${f3(Math.min(...batched))}), ${f3(ms)} s/image with two UNet calls (min ${f3(Math.min(...separate))})`,
);
console.log(
  `  batching speed-up: ${(ms / mb).toFixed(2)}x wall, ${(median(cpuSeparate) / median(cpu)).toFixed(2)}x CPU (two calls / one batched call, medians)`,
);
console.log(`  CPU seconds per image: ${f3(median(cpu))} batched, ${f3(median(cpuSeparate))} with two UNet calls`);
console.log(`  one image including PNG encoding: ${f3(png)} s`);

// 2. Upscaler.
const upscaler = createUpscaler({ 2: join(modelsDir, 'esrgan-x2'), 4: join(modelsDir, 'esrgan-x4') });
const { data, info } = await sharp(readFileSync(join(modelsDir, 'fixtures/flower-128.png')))
  .removeAlpha()
  .raw()
  .toBuffer({ resolveWithObject: true });
const flower = new RawImage(new Uint8ClampedArray(data), info.width, info.height, 3);
for (const scale of [2, 4] as const) {
  const load = await upscaler.load(scale);
  await upscaler.upscale(flower, scale); // warm-up
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await seconds(() => upscaler.upscale(flower, scale)));
  console.log(
    `upscale x${scale} 128x128 -> ${128 * scale}x${128 * scale}: ${f3(median(times))} s (min ${f3(Math.min(...times))}), load ${f3(load)} s`,
  );
}
