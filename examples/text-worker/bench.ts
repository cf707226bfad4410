/**
 * Benchmark (not a test): prints, in one run,
 *   1. one request: time to first token and tokens/s through Berth (HTTP + queue + WebSocket + SSE, the `openai`
 *      client streaming from `berth dev`) against the same transformers.js model and engine called in-process;
 *   2. aggregate tokens/s at concurrency 1, 4 and 16: in-process with batching off (one sequence at a time),
 *      in-process with continuous batching, and through Berth.
 *
 *   npm run build && node --import tsx examples/text-worker/bench.ts
 *
 * Env: BERTH_MODELS_DIR (default ../shared/models), BENCH_TOKENS (default 128), BENCH_ROUNDS (default 5),
 * BERTH_TEXT_THREADS (onnxruntime threads, default 1; `default` = onnxruntime's own choice).
 */
import { cpus, loadavg } from 'node:os';
import OpenAI from 'openai';
import { createLogger } from '@berth/worker';
import { BatchEngine, type GenerateRequest } from './src/engine/batch-engine.js';
import { loadModel } from './src/load.js';
import { resolveTextWorkerOptions } from './src/options.js';
import { benchRequest, PROMPTS, startTextDev } from './scripts/bench-common.js';
import { STORIES } from './src/testing.test-helpers.js';

const TOKENS = Number(process.env['BENCH_TOKENS'] ?? 128);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const AGG_ROUNDS = 3;
// One onnxruntime thread per forward pass by default: on a small shared machine the tiny model gains nothing from
// more, and spinning pool threads take the cores the control plane and client need. Set BERTH_TEXT_THREADS to compare.
const THREADS = process.env['BERTH_TEXT_THREADS'] ?? '1';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const f = (x: number, d = 1) => x.toFixed(d);

const loaded = await loadModel(
  resolveTextWorkerOptions({ model: STORIES }, THREADS === 'default' ? {} : { BERTH_TEXT_THREADS: THREADS }),
  createLogger({ level: 'warn' }),
);
const decode = (ids: number[]) => loaded.tokenizer.decode(ids, { skip_special_tokens: true });
const engineOf = (maxBatch: number) =>
  new BatchEngine(loaded.model, { decode, eosTokenIds: [], contextLength: loaded.contextLength, maxBatch });
// eosTokenIds [] and temperature 1 with a seed: every request makes exactly TOKENS tokens, comparable everywhere.
const req = (i: number, extra: Partial<GenerateRequest> = {}) => benchRequest(loaded.tokenizer, i, TOKENS, extra);

async function inProcessSingle() {
  const e = engineOf(1);
  await e.generate(req(0)); // warm-up
  const ttft: number[] = [];
  const tps: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    let first = 0;
    const res = await e.generate(req(r, { onDelta: () => (first ||= performance.now()) }));
    const t1 = performance.now();
    ttft.push(first - t0);
    tps.push(res.completionTokens / ((t1 - t0) / 1000));
  }
  return { ttft: median(ttft), tps: median(tps) };
}

/** Median over AGG_ROUNDS runs of `run` (which answers tokens made) in tokens/s. */
async function aggregate(run: () => Promise<number>) {
  const rates: number[] = [];
  for (let r = 0; r < AGG_ROUNDS; r++) {
    const t0 = performance.now();
    const tokens = await run();
    rates.push(tokens / ((performance.now() - t0) / 1000));
  }
  return median(rates);
}

async function inProcessAggregate(concurrency: number, maxBatch: number) {
  const e = engineOf(maxBatch);
  await e.generate(req(0));
  return aggregate(async () =>
    (await Promise.all(Array.from({ length: concurrency }, (_, i) => e.generate(req(i))))).reduce(
      (s, r) => s + r.completionTokens,
      0,
    ),
  );
}

// The worker's engine sees no end-of-sequence token either (BERTH_TEXT_IGNORE_EOS), so both sides make TOKENS tokens.
const berth = await startTextDev({ BERTH_TEXT_THREADS: THREADS === 'default' ? '' : THREADS });
try {
  const client = new OpenAI({ apiKey: berth.apiKey, baseURL: `${berth.url}/v2/text/openai/v1`, maxRetries: 0 });
  const ask = (i: number) => ({
    model: 'stories260K',
    messages: [{ role: 'user' as const, content: PROMPTS[i % PROMPTS.length]! }],
    max_tokens: TOKENS,
    temperature: 1,
    seed: i,
  });

  async function berthSingle() {
    await client.chat.completions.create(ask(0));
    const ttft: number[] = [];
    const tps: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = performance.now();
      let first = 0;
      let usage = 0;
      const stream = await client.chat.completions.create({
        ...ask(r),
        stream: true,
        stream_options: { include_usage: true },
      });
      for await (const c of stream) {
        if (c.choices[0]?.delta.content) first ||= performance.now();
        if (c.usage) usage = c.usage.completion_tokens;
      }
      const t1 = performance.now();
      ttft.push(first - t0);
      tps.push(usage / ((t1 - t0) / 1000));
    }
    return { ttft: median(ttft), tps: median(tps) };
  }

  async function berthAggregate(concurrency: number, stream: boolean) {
    return aggregate(async () => (await berthRound(concurrency, stream)).reduce((a, b) => a + b, 0));
  }

  function berthRound(concurrency: number, stream: boolean) {
    return Promise.all(
      Array.from({ length: concurrency }, async (_, i) => {
        if (!stream) return (await client.chat.completions.create(ask(i))).usage!.completion_tokens;
        let n = 0;
        for await (const c of await client.chat.completions.create({
          ...ask(i),
          stream: true,
          stream_options: { include_usage: true },
        }))
          if (c.usage) n = c.usage.completion_tokens;
        return n;
      }),
    );
  }

  console.log(
    `stories260K, ${TOKENS} tokens per request, median of ${ROUNDS} rounds (aggregates: of ${AGG_ROUNDS}); onnxruntime threads: ${THREADS}; ${cpus().length} CPUs, load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  const ip = await inProcessSingle();
  const bs = await berthSingle();
  console.log('\nOne request (streaming)           time to first token   tokens/s');
  console.log(`  in-process engine               ${f(ip.ttft, 2).padStart(8)} ms         ${f(ip.tps).padStart(8)}`);
  console.log(
    `  through Berth (openai client)   ${f(bs.ttft, 2).padStart(8)} ms         ${f(bs.tps).padStart(8)}   (${f(bs.tps / ip.tps, 2)}x of in-process)`,
  );

  console.log(
    '\nAggregate tokens/s     in-process, one at a time   in-process, batched   Berth non-streaming   Berth streaming',
  );
  let at16 = { batched: NaN, viaBerthSse: NaN };
  for (const c of [1, 4, 16]) {
    const serial = await inProcessAggregate(c, 1);
    const batched = await inProcessAggregate(c, 16);
    const viaBerth = await berthAggregate(c, false);
    const viaBerthSse = await berthAggregate(c, true);
    if (c === 16) at16 = { batched, viaBerthSse };
    console.log(
      `  concurrency ${String(c).padEnd(3)}        ${f(serial).padStart(8)}                  ${f(batched).padStart(8)} (${f(batched / serial, 2)}x)   ${f(viaBerth).padStart(8)}            ${f(viaBerthSse).padStart(8)}`,
    );
  }

  // The streaming goals of issue #18, as ratios measured in this run.
  const verdict = (x: number, min: number) => `${f(x, 2)}x (goal >= ${min}x: ${x >= min ? 'PASS' : 'MISS'})`;
  console.log('\nStreaming ratios (same run)');
  console.log(`  one streamed request through Berth / in-process tokens/s      ${verdict(bs.tps / ip.tps, 0.9)}`);
  console.log(
    `  c=16 streaming through Berth / in-process batched tokens/s    ${verdict(at16.viaBerthSse / at16.batched, 0.8)}`,
  );
  console.log(
    `  load average after: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
} finally {
  await berth[Symbol.asyncDispose]();
  await loaded.model.dispose();
}
