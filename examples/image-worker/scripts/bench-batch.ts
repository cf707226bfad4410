/**
 * Benchmark (not a test) of batching, in one run, on 64x64 images upscaled x2 (one ESRGAN tile each), at client
 * concurrency 1, 4, 16 and 32 (closed loop: each client sends its next /runsync when the last one answers):
 *   - batched through Berth: `upscale.ts` (batch handler, maxSize 8) under `berth dev`;
 *   - unbatched through Berth: the same model, one job per call (`scripts/upscale-unbatched.ts`, concurrency 1);
 *   - batched in-process, the endpoint's batch handler (`runBatch`: PNG decode, tiles, model, stitch, PNG encode)
 *     on batches of min(c, 8) requests: the same work without HTTP, queue or WebSocket (the goal's reference);
 *   - batched in-process, the model alone: `Upscaler.upscaleMany` on batches of min(c, 8) images (no PNG work);
 *   - unbatched in-process: `Upscaler.upscale` one image at a time (what batching gains on this CPU).
 * Prints images/s, p50 latency and the ratios, with the load average (the machine may be shared).
 *
 *   npm run build && node --import tsx examples/image-worker/scripts/bench-batch.ts
 *
 * Env: BERTH_MODELS_DIR (default ../shared/models), BENCH_PER_CLIENT (requests per client, default 2, at least 8
 * per level), IMAGE_THREADS (onnxruntime threads per session, default onnxruntime's).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBatch } from '@berth/worker/testing';
import { RawImage } from '@huggingface/transformers';
import sharp from 'sharp';
import { printBatchTable, runBatchBench } from '../../../tests/e2e/batch-bench.test-helpers.js';
import { REPO_ROOT } from '../../../tests/e2e/harness.test-helpers.js';
import { createBatchUpscaleHandler } from '../src/handlers/upscale-batch.js';
import { configureModels, createImageUpscaler } from '../src/setup.js';

const MODELS = process.env['BERTH_MODELS_DIR'] ?? join(REPO_ROOT, '../shared/models');
// The in-process handler stores its images as local files (no control plane): in a temporary folder, removed after.
const OUTPUTS = mkdtempSync(join(tmpdir(), 'berth-bench-batch-'));
process.env['BERTH_OUTPUT_DIR'] = OUTPUTS;
process.env['BERTH_MODELS_DIR'] = MODELS;
const PER_CLIENT = Number(process.env['BENCH_PER_CLIENT'] ?? 2);
const LEVELS = [1, 4, 16, 32];
const MAX_BATCH = 8;
const here = fileURLToPath(new URL('.', import.meta.url));
const requestsAt = (c: number) => Math.max(8, c * PER_CLIENT);

// The input: the fixture flower, 64x64 (one tile), as a base64 PNG and as pixels.
const flower = readFileSync(join(MODELS, 'fixtures/flower-128.png'));
const small = await sharp(flower).removeAlpha().resize(64, 64).png().toBuffer();
const raw = await sharp(small).raw().toBuffer({ resolveWithObject: true });
const pixels = new RawImage(new Uint8ClampedArray(raw.data), raw.info.width, raw.info.height, 3);

const upscaler = createImageUpscaler(configureModels());
await upscaler.upscaleMany([pixels], 2);
await upscaler.upscale(pixels, 2);

const input = { image: small.toString('base64'), scale: 2 };
const handler = createBatchUpscaleHandler({ upscaler });
const result = await runBatchBench({
  name: 'batch',
  endpoints: (dir) => ({
    batched: { worker: relative(dir, join(here, '../upscale.ts')), workers: 1, concurrency: 2 * MAX_BATCH },
    unbatched: { worker: relative(dir, join(here, 'upscale-unbatched.ts')), workers: 1 },
  }),
  env: { BERTH_MODELS_DIR: MODELS, BERTH_LOG_LEVEL: 'warn' },
  input,
  levels: LEVELS,
  maxBatch: MAX_BATCH,
  requestsAt,
  runInProcess: (batched, k) =>
    batched ? upscaler.upscaleMany(Array(k).fill(pixels), 2) : upscaler.upscale(pixels, 2),
  runHandlerInProcess: (k) => runBatch(handler, Array(k).fill(input)),
  warmup: requestsAt(2),
});
printBatchTable(
  result,
  `ESRGAN x2 on 64x64 images (one tile), ${cpus().length} CPUs, batch maxSize ${MAX_BATCH}, IMAGE_THREADS ${process.env['IMAGE_THREADS'] ?? 'default'}`,
  'img',
  LEVELS,
);
rmSync(OUTPUTS, { recursive: true, force: true });
