/**
 * Benchmark (not a test) of batching, in one run, on 64x64 images upscaled x2 (one ESRGAN tile each), at client
 * concurrency 1, 4, 16 and 32 (closed loop: each client sends its next /runsync when the last one answers):
 *   - batched through Berth: `upscale.ts` (batch handler, maxSize 8) under `berth dev`;
 *   - unbatched through Berth: the same model, one job per call (`scripts/upscale-unbatched.ts`, concurrency 1);
 *   - batched in-process: `Upscaler.upscaleMany` on batches of min(c, 8) images (the limit: no HTTP, queue,
 *     PNG decode/encode or upload);
 *   - unbatched in-process: `Upscaler.upscale` one image at a time (what batching gains on this CPU).
 * Prints images/s, p50 latency and the ratios, with the load average (the machine may be shared).
 *
 *   npm run build && node --import tsx examples/image-worker/scripts/bench-batch.ts
 *
 * Env: BERTH_MODELS_DIR (default ../shared/models), BENCH_PER_CLIENT (requests per client, default 2, at least 8
 * per level), IMAGE_THREADS (onnxruntime threads per session, default onnxruntime's).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RawImage } from '@huggingface/transformers';
import sharp from 'sharp';
import { REPO_ROOT, startBerthDev } from '../../../tests/e2e/harness.test-helpers.js';
import { configureModels, createImageUpscaler } from '../src/setup.js';

const MODELS = process.env['BERTH_MODELS_DIR'] ?? join(REPO_ROOT, '../shared/models');
process.env['BERTH_MODELS_DIR'] = MODELS;
const PER_CLIENT = Number(process.env['BENCH_PER_CLIENT'] ?? 2);
const LEVELS = [1, 4, 16, 32];
const MAX_BATCH = 8;
const here = fileURLToPath(new URL('.', import.meta.url));
const f = (x: number, d = 2) => x.toFixed(d);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const requestsAt = (c: number) => Math.max(8, c * PER_CLIENT);

// The input: the fixture flower, 64x64 (one tile), as a base64 PNG and as pixels.
const flower = readFileSync(join(MODELS, 'fixtures/flower-128.png'));
const small = await sharp(flower).removeAlpha().resize(64, 64).png().toBuffer();
const raw = await sharp(small).raw().toBuffer({ resolveWithObject: true });
const pixels = new RawImage(new Uint8ClampedArray(raw.data), raw.info.width, raw.info.height, 3);
const input = { image: small.toString('base64'), scale: 2 };

interface Figures {
  rate: number;
  p50: number;
}

const upscaler = createImageUpscaler(configureModels());
await upscaler.upscaleMany([pixels], 2);
await upscaler.upscale(pixels, 2);

/** In-process: `n` images, in batches of `size` (upscaleMany) or one by one (upscale). */
async function inProcess(batched: boolean, c: number): Promise<Figures> {
  const n = requestsAt(c);
  const size = batched ? Math.min(c, MAX_BATCH) : 1;
  const lat: number[] = [];
  const t0 = performance.now();
  for (let done = 0; done < n; done += size) {
    const t = performance.now();
    const k = Math.min(size, n - done);
    if (batched) await upscaler.upscaleMany(Array(k).fill(pixels), 2);
    else await upscaler.upscale(pixels, 2);
    lat.push(performance.now() - t);
  }
  return { rate: n / ((performance.now() - t0) / 1000), p50: median(lat) };
}

/** Through Berth: `c` clients, each sending /runsync requests one after the other. */
async function throughBerth(post: (path: string, body: unknown) => Promise<any>, ep: string, c: number) {
  const n = requestsAt(c);
  let next = 0;
  const lat: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) {
        next++;
        const t = performance.now();
        const res = await post(`/v2/${ep}/runsync`, { input });
        if (res.body?.status !== 'COMPLETED') throw new Error(`${ep}: ${JSON.stringify(res.body).slice(0, 300)}`);
        lat.push(performance.now() - t);
      }
    }),
  );
  return { rate: n / ((performance.now() - t0) / 1000), p50: median(lat) };
}

mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const dir = mkdtempSync(join(REPO_ROOT, '.berth', 'bench-batch-'));
const worker = (file: string) => relative(dir, join(here, file));
writeFileSync(
  join(dir, 'berth.config.json'),
  JSON.stringify({
    endpoints: {
      batched: { worker: worker('../upscale.ts'), workers: 1 },
      unbatched: { worker: worker('upscale-unbatched.ts'), workers: 1 },
    },
  }),
);
const load0 = loadavg();
const rows: Record<string, Record<number, Figures>> = {
  berthBatched: {},
  berthUnbatched: {},
  ipBatched: {},
  ipSingle: {},
};
let sizes = '';
{
  await using berth = await startBerthDev({
    config: join(dir, 'berth.config.json'),
    waitForWorkers: ['batched', 'unbatched'],
    env: { BERTH_MODELS_DIR: MODELS, BERTH_LOG_LEVEL: 'warn' },
    readyTimeoutMs: 120_000, // two workers importing transformers.js on a busy machine
  });
  const post = (path: string, body: unknown) => berth.post(path, body);
  for (const ep of ['batched', 'unbatched']) await throughBerth(post, ep, 2); // model load, warm-up
  // Interleaved per level, so a change in the machine's load touches all four alike.
  for (const c of LEVELS) {
    rows['berthBatched']![c] = await throughBerth(post, 'batched', c);
    rows['berthUnbatched']![c] = await throughBerth(post, 'unbatched', c);
    rows['ipBatched']![c] = await inProcess(true, c);
    rows['ipSingle']![c] = await inProcess(false, c);
  }
  const health = (await berth.json('/v2/batched/health')).body;
  sizes = `batched endpoint: ${health.batch.batches} batches, ${health.batch.jobs} jobs, mean size ${health.batch.meanSize}`;
}
rmSync(dir, { recursive: true, force: true });
const load1 = loadavg();

console.log(
  `\nESRGAN x2 on 64x64 images (one tile), ${cpus().length} CPUs, batch maxSize ${MAX_BATCH}, IMAGE_THREADS ${process.env['IMAGE_THREADS'] ?? 'default'}`,
);
console.log(`load average before ${load0.map((l) => f(l)).join(' ')}, after ${load1.map((l) => f(l)).join(' ')}\n`);
console.log(
  '| c | Berth batched img/s (p50 ms) | Berth unbatched img/s (p50 ms) | in-process batched img/s | in-process one-by-one img/s | batched / unbatched (Berth) | Berth batched / in-process batched | in-process batched / one-by-one |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const c of LEVELS) {
  const b = rows['berthBatched']![c]!;
  const u = rows['berthUnbatched']![c]!;
  const ib = rows['ipBatched']![c]!;
  const is = rows['ipSingle']![c]!;
  console.log(
    `| ${c} | ${f(b.rate)} (${f(b.p50, 0)}) | ${f(u.rate)} (${f(u.p50, 0)}) | ${f(ib.rate)} | ${f(is.rate)} | ${f(b.rate / u.rate)}x | ${f(b.rate / ib.rate)}x | ${f(ib.rate / is.rate)}x |`,
  );
}
const p1 = rows['berthBatched']![1]!.p50 / rows['berthUnbatched']![1]!.p50;
console.log(`\nc=1 p50: batched ${f(p1)}x unbatched (goal <= 1.05); ${sizes}`);
