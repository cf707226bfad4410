/**
 * Interleaved A/B of token streaming (not a test): the same engine in this process, `berth dev` with the model in
 * an engine thread, and `berth dev` with the model on the worker's main thread (BERTH_TEXT_ENGINE_THREAD=0), one
 * round of each in turn (order alternating), so all three see the same machine load. Prints median tokens/s and
 * the median of per-round ratios (Berth ÷ in-process of the same round) for one streamed request and for 16.
 *
 *   npm run build && node --import tsx examples/text-worker/scripts/stream-ab.ts
 *
 * Env: N1 (rounds of one request, default 30), N16 (rounds of 16, default 8). 128 tokens per request.
 */
import { loadavg } from 'node:os';
import OpenAI from 'openai';
import { createLogger } from '@berth/worker';
import { BatchEngine } from '../src/engine/batch-engine.js';
import { loadModel } from '../src/load.js';
import { resolveTextWorkerOptions } from '../src/options.js';
import { benchRequest, PROMPTS, startTextDev } from './bench-common.js';
import { STORIES } from '../src/testing.test-helpers.js';

const TOKENS = 128;
const N1 = Number(process.env['N1'] ?? 30);
const N16 = Number(process.env['N16'] ?? 8);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const loaded = await loadModel(
  resolveTextWorkerOptions({ model: STORIES }, { BERTH_TEXT_THREADS: '1' }),
  createLogger({ level: 'warn' }),
);
const decode = (ids: number[]) => loaded.tokenizer.decode(ids, { skip_special_tokens: true });
const engine = new BatchEngine(loaded.model, {
  decode,
  eosTokenIds: [],
  contextLength: loaded.contextLength,
  maxBatch: 16,
});
const req = (i: number) => benchRequest(loaded.tokenizer, i, TOKENS, { onDelta: () => {} });
const start = (thread: string) => startTextDev({ BERTH_TEXT_ENGINE_THREAD: thread });
const on = await start('1');
const off = await start('0');
const clients = [on, off].map(
  (b) => new OpenAI({ apiKey: b.apiKey, baseURL: `${b.url}/v2/text/openai/v1`, maxRetries: 0 }),
);
const stream = async (c: OpenAI, i: number) => {
  let n = 0;
  for await (const ch of await c.chat.completions.create({
    model: 'stories260K',
    messages: [{ role: 'user', content: PROMPTS[i % 5]! }],
    max_tokens: TOKENS,
    temperature: 1,
    seed: i,
    stream: true,
    stream_options: { include_usage: true },
  }))
    if (ch.usage) n = ch.usage.completion_tokens;
  return n;
};
const timed = async (f: () => Promise<number>) => {
  const t0 = performance.now();
  const n = await f();
  return n / ((performance.now() - t0) / 1000);
};
try {
  console.log(
    `load before ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  for (const c of [1, 16]) {
    const rates: number[][] = [[], [], []];
    const N = c === 1 ? N1 : N16;
    // warm-up
    await Promise.all(Array.from({ length: c }, (_, i) => engine.generate(req(i))));
    for (const cl of clients) await Promise.all(Array.from({ length: c }, (_, i) => stream(cl, i)));
    for (let r = 0; r < N; r++) {
      const order = r % 2 ? [0, 1, 2] : [2, 1, 0];
      for (const k of order) {
        const f =
          k === 0
            ? async () =>
                (await Promise.all(Array.from({ length: c }, (_, i) => engine.generate(req(i + r))))).reduce(
                  (s, x) => s + x.completionTokens,
                  0,
                )
            : async () =>
                (await Promise.all(Array.from({ length: c }, (_, i) => stream(clients[k - 1]!, i + r)))).reduce(
                  (s, x) => s + x,
                  0,
                );
        rates[k]!.push(await timed(f));
      }
    }
    const [ip, th, nt] = rates.map(median) as [number, number, number];
    // per-round ratios (same moment), then their median
    const rr = (k: number) => median(rates[k]!.map((x, i) => x / rates[0]![i]!));
    console.log(
      `c=${c} (${N} interleaved rounds, medians): in-process ${ip.toFixed(0)} tok/s; Berth engine-thread ${th.toFixed(0)} (${(th / ip).toFixed(2)}x; median per-round ratio ${rr(1).toFixed(2)}x); Berth main-thread engine ${nt.toFixed(0)} (${(nt / ip).toFixed(2)}x; per-round ${rr(2).toFixed(2)}x)`,
    );
  }
  console.log(
    `load after ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
} finally {
  await on[Symbol.asyncDispose]();
  await off[Symbol.asyncDispose]();
  await loaded.model.dispose();
}
