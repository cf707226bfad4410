import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, startBerthDev } from './harness.test-helpers.js';

/**
 * The batching benchmark the samples share (examples/image-worker/scripts/bench-batch.ts,
 * examples/text-worker/scripts/bench-batch.ts): at each client concurrency, interleaved so a change in the machine's
 * load touches all four alike, the batched endpoint through `berth dev`, the same model unbatched through it, and
 * the model batched and one by one in this process; then a table with the issue #28 goals.
 */
export interface Figures {
  /** Items per second. */
  rate: number;
  /** Median latency of one request (through Berth) or one batch (in process), ms. */
  p50: number;
}

export interface BatchBench {
  /** A short name, for the temporary folder. */
  name: string;
  /** `batched` and `unbatched` endpoints of the berth.config.json (worker paths relative to `dir`). */
  endpoints: (dir: string) => Record<string, object>;
  env: Record<string, string>;
  /** Every request's input. */
  input: unknown;
  levels: readonly number[];
  maxBatch: number;
  /** Requests (and in-process items) at concurrency `c`. */
  requestsAt: (c: number) => number;
  /** Runs `k` items in process, as one batch (`batched`) or one at a time: the model alone. */
  runInProcess: (batched: boolean, k: number) => Promise<unknown>;
  /**
   * Runs `k` requests' inputs in process as one batch through the endpoint's own batch handler (`runBatch` of
   * `@berth/worker/testing`: input checks, the handler's per-job work such as tokenizing or PNG decoding and
   * encoding, the model): the same work as the batched endpoint, without HTTP, the queue and the WebSocket.
   */
  runHandlerInProcess: (k: number) => Promise<unknown>;
  /** Requests per endpoint before the timed levels (model load, warm-up). */
  warmup: number;
}

export interface BatchBenchResult {
  rows: Record<'berthBatched' | 'berthUnbatched' | 'ipBatched' | 'ipSingle' | 'ipHandler', Record<number, Figures>>;
  /** The batched endpoint's `/health` batch counts. */
  sizes: string;
  /** Mean batch size of the batched endpoint at each client concurrency. */
  meanSizeAt: Record<number, number>;
  load0: number[];
  load1: number[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** In process: `n` items, in batches of `size` (or one by one), timed per call: the model alone, or the handler. */
async function inProcess(b: BatchBench, batched: boolean | 'handler', c: number): Promise<Figures> {
  const n = b.requestsAt(c);
  const size = batched ? Math.min(c, b.maxBatch) : 1;
  const lat: number[] = [];
  const t0 = performance.now();
  for (let done = 0; done < n; done += size) {
    const t = performance.now();
    const k = Math.min(size, n - done);
    if (batched === 'handler') await b.runHandlerInProcess(k);
    else if (batched) await b.runInProcess(true, k);
    else await b.runInProcess(false, 1);
    lat.push(performance.now() - t);
  }
  return { rate: n / ((performance.now() - t0) / 1000), p50: median(lat) };
}

type Post = (path: string, body: unknown) => Promise<{ body: { status?: string } }>;

/** Through Berth: `c` clients, each sending its next /runsync when the last one answers. */
async function closedLoop(post: Post, ep: string, input: unknown, c: number, n: number): Promise<Figures> {
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

export async function runBatchBench(b: BatchBench): Promise<BatchBenchResult> {
  mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
  const dir = mkdtempSync(join(REPO_ROOT, '.berth', `bench-${b.name}-`));
  writeFileSync(join(dir, 'berth.config.json'), JSON.stringify({ endpoints: b.endpoints(dir) }));
  const load0 = loadavg();
  const meanSizeAt: Record<number, number> = {};
  const rows: BatchBenchResult['rows'] = {
    berthBatched: {},
    berthUnbatched: {},
    ipBatched: {},
    ipSingle: {},
    ipHandler: {},
  };
  try {
    await using berth = await startBerthDev({
      config: join(dir, 'berth.config.json'),
      waitForWorkers: ['batched', 'unbatched'],
      env: b.env,
      readyTimeoutMs: 120_000, // two workers importing transformers.js on a busy machine
    });
    const post: Post = (path, body) => berth.post(path, body);
    for (const ep of ['batched', 'unbatched']) await closedLoop(post, ep, b.input, 2, b.warmup);
    const batchCounts = async () => {
      const h = (await berth.json('/v2/batched/health')).body as { batch: { batches: number; jobs: number } };
      return h.batch;
    };
    for (const c of b.levels) {
      const n = b.requestsAt(c);
      const before = await batchCounts();
      rows.berthBatched[c] = await closedLoop(post, 'batched', b.input, c, n);
      const after = await batchCounts();
      meanSizeAt[c] = (after.jobs - before.jobs) / Math.max(1, after.batches - before.batches);
      rows.berthUnbatched[c] = await closedLoop(post, 'unbatched', b.input, c, n);
      rows.ipBatched[c] = await inProcess(b, true, c);
      rows.ipSingle[c] = await inProcess(b, false, c);
      rows.ipHandler[c] = await inProcess(b, 'handler', c);
    }
    const h = (await berth.json('/v2/batched/health')).body;
    const sizes = `batched endpoint: ${h.batch.batches} batches, ${h.batch.jobs} jobs, mean size ${h.batch.meanSize}`;
    return { rows, sizes, meanSizeAt, load0, load1: loadavg() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The table (items/s, p50 ms in parentheses, the ratios) and the two goals of issue #28. */
export function printBatchTable(r: BatchBenchResult, title: string, unit: string, levels: readonly number[]): void {
  const f = (x: number, d = 2) => x.toFixed(d);
  console.log(`\n${title}`);
  console.log(
    `load average before ${r.load0.map((l) => f(l)).join(' ')}, after ${r.load1.map((l) => f(l)).join(' ')}\n`,
  );
  console.log(
    `| c | Berth batched ${unit}/s (p50 ms) | Berth unbatched ${unit}/s (p50 ms) | in-process handler batched ${unit}/s | in-process model batched ${unit}/s | in-process model one-by-one ${unit}/s | batched / unbatched (Berth) | Berth batched / in-process handler | Berth batched / in-process model | in-process model batched / one-by-one |`,
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const c of levels) {
    const b = r.rows.berthBatched[c]!;
    const u = r.rows.berthUnbatched[c]!;
    const ih = r.rows.ipHandler[c]!;
    const ib = r.rows.ipBatched[c]!;
    const is = r.rows.ipSingle[c]!;
    console.log(
      `| ${c} | ${f(b.rate, 1)} (${f(b.p50, 1)}) | ${f(u.rate, 1)} (${f(u.p50, 1)}) | ${f(ih.rate, 1)} | ${f(ib.rate, 1)} | ${f(is.rate, 1)} | ${f(b.rate / u.rate)}x | ${f(b.rate / ih.rate)}x | ${f(b.rate / ib.rate)}x | ${f(ib.rate / is.rate)}x |`,
    );
  }
  const p1 = r.rows.berthBatched[1]!.p50 / r.rows.berthUnbatched[1]!.p50;
  const c16 = r.rows.berthBatched[16]!.rate / r.rows.ipHandler[16]!.rate;
  const c16model = r.rows.berthBatched[16]!.rate / r.rows.ipBatched[16]!.rate;
  console.log(
    `\nc=16 Berth batched / in-process batched (the same batch handler): ${f(c16)}x (goal >= 0.85: ${c16 >= 0.85 ? 'PASS' : 'MISS'}); / the model alone in process: ${f(c16model)}x`,
  );
  console.log(`c=1 p50: batched ${f(p1)}x unbatched (goal <= 1.05: ${p1 <= 1.05 ? 'PASS' : 'MISS'}); ${r.sizes}`);
  console.log(`mean batch size by c: ${levels.map((c) => `c=${c} ${f(r.meanSizeAt[c] ?? Number.NaN, 1)}`).join(', ')}`);
}
