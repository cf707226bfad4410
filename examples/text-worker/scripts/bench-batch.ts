/**
 * Benchmark (not a test) of the batched `score` endpoint, in one run, at client concurrency 1, 4, 16 and 32 (closed
 * loop: each client sends its next /runsync when the last one answers), on stories260K:
 *   - batched through Berth: `score-worker.ts` (batch handler, maxSize 16) under `berth dev`;
 *   - unbatched through Berth: the same model and code, one job per forward pass (`scripts/score-unbatched.ts`);
 *   - batched in-process: `scoreMany` on batches of min(c, 16) texts (the limit: no HTTP, queue or WebSocket);
 *   - one by one in-process: `scoreMany` on one text at a time (what batching gains on this CPU).
 * Prints texts/s, p50 latency and the ratios, with the load average (the machine may be shared).
 *
 *   npm run build && node --import tsx examples/text-worker/scripts/bench-batch.ts
 *
 * Env: BERTH_MODELS_DIR (default ../shared/models), BENCH_PER_CLIENT (requests per client, default 8, at least 64
 * per level), BERTH_TEXT_THREADS (onnxruntime threads, default 1; `default` = onnxruntime's own choice).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '@berth/worker';
import { startBerthDev } from '../../../tests/e2e/harness.test-helpers.js';
import { loadModel } from '../src/load.js';
import { resolveTextWorkerOptions } from '../src/options.js';
import { scoreItem } from '../src/score/handler.js';
import { scoreMany } from '../src/score/scorer.js';
import { MODELS_DIR, REPO_ROOT, STORIES } from '../src/testing.test-helpers.js';

const PER_CLIENT = Number(process.env['BENCH_PER_CLIENT'] ?? 8);
const THREADS = process.env['BERTH_TEXT_THREADS'] ?? '1';
const LEVELS = [1, 4, 16, 32];
const MAX_BATCH = 16;
const here = fileURLToPath(new URL('.', import.meta.url));
const f = (x: number, d = 2) => x.toFixed(d);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const requestsAt = (c: number) => Math.max(64, c * PER_CLIENT);
// About 60 tokens of context and text.
const input = {
  context: 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park.',
  text: ' One day, she saw a big red ball under a tree. She ran to the ball and said, "Mom, can I play with it?"',
};

interface Figures {
  rate: number;
  p50: number;
}

const loaded = await loadModel(
  resolveTextWorkerOptions({ model: STORIES }, THREADS === 'default' ? {} : { BERTH_TEXT_THREADS: THREADS }),
  createLogger({ level: 'warn' }),
);
const item = scoreItem(loaded, input);
await scoreMany(loaded.model, Array(MAX_BATCH).fill(item));

/** In-process: the level's texts, in batches of min(c, 16) or one by one. */
async function inProcess(batched: boolean, c: number): Promise<Figures> {
  const n = requestsAt(c);
  const size = batched ? Math.min(c, MAX_BATCH) : 1;
  const lat: number[] = [];
  const t0 = performance.now();
  for (let done = 0; done < n; done += size) {
    const t = performance.now();
    await scoreMany(loaded.model, Array(Math.min(size, n - done)).fill(item));
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
const dir = mkdtempSync(join(REPO_ROOT, '.berth', 'bench-score-'));
const worker = (file: string) => relative(dir, join(here, file));
writeFileSync(
  join(dir, 'berth.config.json'),
  JSON.stringify({
    endpoints: {
      batched: { worker: worker('../score-worker.ts'), workers: 1, concurrency: 2 * MAX_BATCH },
      unbatched: { worker: worker('score-unbatched.ts'), workers: 1 },
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
try {
  await using berth = await startBerthDev({
    config: join(dir, 'berth.config.json'),
    waitForWorkers: ['batched', 'unbatched'],
    env: {
      BERTH_MODELS_DIR: MODELS_DIR,
      BERTH_LOG_LEVEL: 'warn',
      BERTH_TEXT_THREADS: THREADS === 'default' ? '' : THREADS,
    },
    readyTimeoutMs: 120_000,
  });
  const post = (path: string, body: unknown) => berth.post(path, body);
  for (const ep of ['batched', 'unbatched']) await throughBerth(post, ep, 4); // warm-up
  // Interleaved per level, so a change in the machine's load touches all four alike.
  for (const c of LEVELS) {
    rows['berthBatched']![c] = await throughBerth(post, 'batched', c);
    rows['berthUnbatched']![c] = await throughBerth(post, 'unbatched', c);
    rows['ipBatched']![c] = await inProcess(true, c);
    rows['ipSingle']![c] = await inProcess(false, c);
  }
  const health = (await berth.json('/v2/batched/health')).body;
  sizes = `batched endpoint: ${health.batch.batches} batches, ${health.batch.jobs} jobs, mean size ${health.batch.meanSize}`;
} finally {
  rmSync(dir, { recursive: true, force: true });
  await loaded.model.dispose();
}
const load1 = loadavg();

console.log(
  `\nscore endpoint, stories260K, ${item.ids.length} tokens per text, ${cpus().length} CPUs, batch maxSize ${MAX_BATCH}, onnxruntime threads ${THREADS}`,
);
console.log(`load average before ${load0.map((l) => f(l)).join(' ')}, after ${load1.map((l) => f(l)).join(' ')}\n`);
console.log(
  '| c | Berth batched texts/s (p50 ms) | Berth unbatched texts/s (p50 ms) | in-process batched texts/s | in-process one-by-one texts/s | batched / unbatched (Berth) | Berth batched / in-process batched | in-process batched / one-by-one |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const c of LEVELS) {
  const b = rows['berthBatched']![c]!;
  const u = rows['berthUnbatched']![c]!;
  const ib = rows['ipBatched']![c]!;
  const is = rows['ipSingle']![c]!;
  console.log(
    `| ${c} | ${f(b.rate, 1)} (${f(b.p50, 1)}) | ${f(u.rate, 1)} (${f(u.p50, 1)}) | ${f(ib.rate, 1)} | ${f(is.rate, 1)} | ${f(b.rate / u.rate)}x | ${f(b.rate / ib.rate)}x | ${f(ib.rate / is.rate)}x |`,
  );
}
const p1 = rows['berthBatched']![1]!.p50 / rows['berthUnbatched']![1]!.p50;
const c16 = rows['berthBatched']![16]!.rate / rows['ipBatched']![16]!.rate;
console.log(`\nc=16 Berth batched / in-process batched: ${f(c16)}x (goal >= 0.85: ${c16 >= 0.85 ? 'PASS' : 'MISS'})`);
console.log(`c=1 p50: batched ${f(p1)}x unbatched (goal <= 1.05: ${p1 <= 1.05 ? 'PASS' : 'MISS'}); ${sizes}`);
