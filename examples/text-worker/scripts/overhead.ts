/**
 * Benchmark (not a test) of what Berth adds, in CPU, per streamed token and per batched job (issue #40): the same
 * handler code on the same model in this process (`runJob` / `runBatch` of `@berth/worker/testing`) and through
 * `berth dev` (the OpenAI client streaming one request at a time; `/runsync` at c=16 on a batched endpoint), for
 * stories260K and for a fake model whose forward pass is a busy loop calibrated to a known CPU time
 * (`fake-model.ts`). Added CPU = (CPU of `berth dev` + the endpoint's worker process through Berth − CPU of this
 * process in-process) ÷ tokens (or jobs), each side's measured busy-loop CPU subtracted first for the fake model, so
 * the loop's noise cancels. Rounds interleave the two sides (in-process, Berth; then Berth, in-process). The old
 * wall-clock ratios (Berth ÷ in-process tokens/s and jobs/s) are kept as columns. Writes JSON (`--out`).
 *
 *   npm run build && node --import tsx examples/text-worker/scripts/overhead.ts [--rounds 3] [--fake-us 2000] [--out f]
 *     [--only text,fake-text,fake-text-c16,score,fake-score] [--streams 8] [--jobs 320]
 *
 * Env: BERTH_MODELS_DIR (default ../shared/models), BENCH_TOKENS (default 128).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { createLogger, type BatchHandler, type Handler } from '@berth/worker';
import { runBatch, runJob } from '@berth/worker/testing';
import { createTextWorker } from '../src/index.js';
import { createTextHandler } from '../src/handler.js';
import { loadModel } from '../src/load.js';
import { resolveTextWorkerOptions } from '../src/options.js';
import { createScoreHandler } from '../src/score/handler.js';
import { TextModel } from '../src/text-model.js';
import { MODELS_DIR, REPO_ROOT, STORIES } from '../src/testing.test-helpers.js';
import { startBerthDev } from '../../../tests/e2e/harness.test-helpers.js';
import { burnt, calibrate, FakeEngine, fakeScoreHandler } from './fake-model.js';
import { cpuUs, processGroups } from './proc-cpu.js';
import { type Side, summarize, printTables } from './overhead-report.js';

const { values: a } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    'fake-us': { type: 'string', default: '2000' },
    streams: { type: 'string', default: '8' },
    jobs: { type: 'string', default: '320' },
    out: { type: 'string', default: join(REPO_ROOT, 'bench/results/overhead.json') },
    only: { type: 'string' },
  },
});
const ROUNDS = Number(a.rounds);
const FAKE_US = Number(a['fake-us']);
const STREAMS = Number(a.streams);
const JOBS = Number(a.jobs);
const TOKENS = Number(process.env['BENCH_TOKENS'] ?? 128);
const C = 16;
const load0 = loadavg();
const log = createLogger({ level: 'warn' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const iters = calibrate(FAKE_US);
const stats = mkdtempSync(join(tmpdir(), 'berth-overhead-'));
const scoreInput = {
  context: 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park.',
  text: ' One day, she saw a big red ball under a tree. She ran to the ball and said, "Mom, can I play with it?"',
};
const chat = (i: number) => ({
  model: 'm',
  messages: [{ role: 'user' as const, content: 'Once upon a time' }],
  max_tokens: TOKENS,
  temperature: 1,
  seed: i,
  stream: true as const,
  stream_options: { include_usage: true },
});

// In this process: the text worker as worker.ts builds it (engine thread, one onnxruntime thread, EOS ignored), the
// fake text model with the same handler, the score endpoint's batch handler, the fake batch handler.
const text = await createTextWorker({ model: STORIES, threads: 1, ignoreEos: true, maxBatch: C }, log);
const loaded = await loadModel(resolveTextWorkerOptions({ model: STORIES }, { BERTH_TEXT_THREADS: '1' }), log);
const fakeText = createTextHandler(new TextModel(new FakeEngine(iters), loaded.tokenizer, 4096, 'fake'));
const inProcess: Record<string, { stream?: Handler; batch?: BatchHandler }> = {
  text: { stream: text.handler },
  'fake-text': { stream: fakeText },
  score: { batch: createScoreHandler(loaded) },
  'fake-score': { batch: fakeScoreHandler(iters) },
};

const berth = await startBerthDev({
  config: join(REPO_ROOT, 'examples/text-worker/scripts/overhead.berth.config.json'),
  env: {
    BERTH_MODELS_DIR: MODELS_DIR,
    BERTH_TEXT_MODEL: STORIES,
    BERTH_LOG_LEVEL: 'warn',
    BERTH_TEXT_IGNORE_EOS: '1',
    BERTH_TEXT_THREADS: '1',
    BERTH_FAKE_ITERS: String(iters),
    BERTH_FAKE_STATS: stats,
  },
  waitForWorkers: ['text', 'score', 'fake-text', 'fake-score'],
  readyTimeoutMs: 180_000,
});
const client = (ep: string) =>
  new OpenAI({ apiKey: berth.apiKey, maxRetries: 0, baseURL: `${berth.url}/v2/${ep}/openai/v1` });
const clients: Record<string, OpenAI> = { text: client('text'), 'fake-text': client('fake-text') };
const groups = processGroups(berth.child.pid!, {
  text: /(^|\/)worker\.ts$/,
  score: /(^|\/)score-worker\.ts$/,
  'fake-text': /fake-text-worker\.ts$/,
  'fake-score': /fake-score-worker\.ts$/,
});
/** The busy loop's CPU so far in an endpoint's worker (fake models; 0 for the others): asked for by SIGUSR2. */
async function workerBurn(ep: string): Promise<number> {
  if (!ep.startsWith('fake')) return 0;
  const file = join(stats, `${ep}.json`);
  rmSync(file, { force: true });
  process.kill(groups[ep]![0]!, 'SIGUSR2');
  for (let i = 0; i < 400; i++) {
    try {
      return (JSON.parse(readFileSync(file, 'utf8')) as { us: number }).us;
    } catch {
      await sleep(5); // not written yet (or half written)
    }
  }
  throw new Error(`the ${ep} worker did not answer SIGUSR2 with ${file}`);
}

/** `n` streamed chat completions, `c` at a time (through Berth or `runJob`): tokens made. */
async function streams(ep: string, viaBerth: boolean, n: number, c = 1): Promise<number> {
  let tokens = 0;
  let next = 0;
  const one = async (i: number) => {
    if (viaBerth) {
      const s = await clients[ep]!.chat.completions.create(chat(i));
      for await (const x of s) if (x.usage) tokens += x.usage.completion_tokens;
      return;
    }
    const r = await runJob(inProcess[ep]!.stream!, { openai_route: '/v1/chat/completions', openai_input: chat(i) });
    const last = r.chunks.at(-1) as { usage?: { completion_tokens: number } } | undefined;
    if (r.status !== 'COMPLETED' || !last?.usage) throw new Error(`${ep} in process: ${r.status} ${r.error ?? ''}`);
    tokens += last.usage.completion_tokens;
  };
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) await one(next++);
    }),
  );
  return tokens;
}

/** `n` jobs of the batched endpoint: through Berth, `C` clients each sending its next `/runsync` when the last one
 * answers; in process, `runBatch` on batches of `C`. */
async function batched(ep: string, viaBerth: boolean, n: number): Promise<number> {
  if (!viaBerth) {
    for (let done = 0; done < n; done += C) {
      const rs = await runBatch(inProcess[ep]!.batch!, Array(Math.min(C, n - done)).fill(scoreInput));
      if (rs.some((r) => r.status !== 'COMPLETED')) throw new Error(`${ep} in process: ${rs[0]?.error}`);
    }
    return n;
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next++ < n) {
        const { body } = await berth.post(`/v2/${ep}/runsync`, { input: scoreInput });
        if ((body as { status?: string }).status !== 'COMPLETED') throw new Error(`${ep}: ${JSON.stringify(body)}`);
      }
    }),
  );
  return n;
}

/** One measured phase: CPU of this process (in process) or of `berth dev` and the endpoint's worker (through it). */
async function phase(ep: string, viaBerth: boolean, run: () => Promise<number>): Promise<Side> {
  const g = groups[ep]!;
  const b0 = viaBerth ? await workerBurn(ep) : burnt.us;
  const s0 = cpuUs([berth.child.pid!]);
  const w0 = cpuUs(g);
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const units = await run();
  const ms = performance.now() - t0;
  await sleep(300); // let the last answers' work and the CPU counters settle
  const self = process.cpuUsage(self0);
  const server = cpuUs([berth.child.pid!]) - s0;
  const worker = cpuUs(g) - w0;
  const burn = (viaBerth ? await workerBurn(ep) : burnt.us) - b0; // read after the CPU: its signal costs nothing here
  return viaBerth
    ? { units, ms, serverUs: server, workerUs: worker, burnUs: burn }
    : { units, ms, serverUs: 0, workerUs: self.user + self.system, burnUs: burn };
}

/** What each row runs, on which endpoint. */
const work: Record<string, { ep: string; run: (viaBerth: boolean) => Promise<number> }> = {
  text: { ep: 'text', run: (b) => streams('text', b, STREAMS) },
  'fake-text': { ep: 'fake-text', run: (b) => streams('fake-text', b, STREAMS) },
  'fake-text-c16': { ep: 'fake-text', run: (b) => streams('fake-text', b, C, C) },
  score: { ep: 'score', run: (b) => batched('score', b, JOBS) },
  'fake-score': { ep: 'fake-score', run: (b) => batched('fake-score', b, JOBS) },
};
if (a.only) for (const name of Object.keys(work)) if (!a.only.split(',').includes(name)) delete work[name];
const rounds: Record<string, { inProcess: Side; berth: Side }[]> = {};
try {
  for (const [name, { run }] of Object.entries(work)) {
    await run(false); // warm-up, both sides
    await run(true);
    rounds[name] = [];
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, { ep, run }] of Object.entries(work)) {
      const first = r % 2 === 0;
      const x = await phase(ep, !first, () => run(!first));
      const y = await phase(ep, first, () => run(first));
      rounds[name]!.push(first ? { inProcess: x, berth: y } : { inProcess: y, berth: x });
    }
  }
} finally {
  await berth[Symbol.asyncDispose]();
  await text.close();
  await loaded.model.dispose();
  rmSync(stats, { recursive: true, force: true });
}

const fakeUs = burnt.us / Math.max(1, burnt.units);
const summary = summarize(rounds);
const meta = {
  date: new Date().toISOString(),
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model,
  node: process.version,
  load: { before: load0, after: loadavg() },
  tokensPerRequest: TOKENS,
  rounds: ROUNDS,
  fake: { targetUs: FAKE_US, iterations: iters, measuredUsPerUnitInProcess: fakeUs },
};
printTables(meta, summary);
writeFileSync(a.out, `${JSON.stringify({ meta, summary, rounds }, null, 2)}\n`);
console.log(`\nJSON: ${a.out}`);
