/**
 * CPU per streamed token of each process on the streaming path (not a test): starts `berth dev` on the text
 * worker (memory store, like bench.ts), then for one streamed request at a time and for 16 at once reads
 * utime+stime (/proc/<pid>/stat) of `berth dev` (server + supervisor), each worker process and this client
 * before and after, and prints microseconds of CPU per token for each.
 *
 *   npm run build && node --import tsx examples/text-worker/scripts/stream-cpu.ts
 *
 * Env: BENCH_TOKENS (default 128), STREAM_CPU_REQUESTS (single requests, default 20), STREAM_CPU_ROUNDS (c=16
 * rounds, default 4), BERTH_CPU_PROF_DIR (if set, `berth dev` and workers run with --cpu-prof into that folder).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { createLogger } from '@berth/worker';
import { BatchEngine } from '../src/engine/batch-engine.js';
import { loadModel } from '../src/load.js';
import { resolveTextWorkerOptions } from '../src/options.js';
import { chatIds, startTextDev } from './bench-common.js';
import { cpuUs, descendants } from './proc-cpu.js';
import { STORIES } from '../src/testing.test-helpers.js';

const TOKENS = Number(process.env['BENCH_TOKENS'] ?? 128);
const SINGLE = Number(process.env['STREAM_CPU_REQUESTS'] ?? 20);
const ROUNDS = Number(process.env['STREAM_CPU_ROUNDS'] ?? 4);
const PROF = process.env['BERTH_CPU_PROF_DIR'];
const PROF_PRELOAD = process.env['BERTH_CPU_PROF_PRELOAD'] ?? '/tmp/st-prof-preload.mjs';

// The same engine in this process first: its CPU per token is what the worker would spend without Berth.
{
  const loaded = await loadModel(
    resolveTextWorkerOptions({ model: STORIES }, { BERTH_TEXT_THREADS: '1' }),
    createLogger({ level: 'warn' }),
  );
  const tk = loaded.tokenizer;
  const engine = new BatchEngine(loaded.model, {
    decode: (ids: number[]) => tk.decode(ids, { skip_special_tokens: true }),
    eosTokenIds: [],
    contextLength: loaded.contextLength,
    maxBatch: 16,
  });
  const ids = () => chatIds(tk, 'Once upon a time');
  const gen = (seed: number) =>
    engine.generate({
      promptIds: ids(),
      maxTokens: TOKENS,
      temperature: 1,
      topP: 1,
      stop: [],
      seed,
      onDelta: () => {},
    });
  await gen(0);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  for (let i = 0; i < SINGLE; i++) n += (await gen(i)).completionTokens;
  const c1 = process.cpuUsage(c0);
  console.log(
    `in-process engine, one request at a time: ${n} tokens, ${(n / ((performance.now() - t0) / 1000)).toFixed(0)} tokens/s, ${((c1.user + c1.system) / n).toFixed(1)} us CPU/token`,
  );
  await loaded.model.dispose();
}

const berth = await startTextDev(PROF ? { NODE_OPTIONS: `--import ${PROF_PRELOAD}`, ST_PROF_DIR: PROF } : {});
try {
  const client = new OpenAI({ apiKey: berth.apiKey, baseURL: `${berth.url}/v2/text/openai/v1`, maxRetries: 0 });
  // Client-side timeline of the single requests (ms from the call): response headers, first content, last content, end.
  const marks: number[][] = [];
  const one = async (i: number, timeline = false) => {
    let n = 0;
    const t0 = performance.now();
    const m = [0, 0, 0, 0];
    const stream = await client.chat.completions.create({
      model: 'stories260K',
      messages: [{ role: 'user', content: 'Once upon a time' }],
      max_tokens: TOKENS,
      temperature: 1,
      seed: i,
      stream: true,
      stream_options: { include_usage: true },
    });
    m[0] = performance.now() - t0;
    for await (const c of stream) {
      const d = c.choices[0]?.delta.content;
      if (d) {
        m[1] ||= performance.now() - t0;
        m[2] = performance.now() - t0;
      }
      if (c.usage) n = c.usage.completion_tokens;
    }
    m[3] = performance.now() - t0;
    if (timeline) marks.push(m);
    return n;
  };
  await one(0);
  const pids = [berth.child.pid!, ...descendants(berth.child.pid!)];
  const names = pids.map((p) =>
    readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').slice(0, 4).join(' ').slice(-60),
  );
  // With BERTH_CPU_PROF_DIR, SIGUSR2 starts and stops the profiler the preload installed, around each phase.
  const signal = async () => {
    if (!PROF) return;
    for (const p of pids) if (!names[pids.indexOf(p)]!.includes('esbuild')) process.kill(p, 'SIGUSR2');
    await new Promise((r) => setTimeout(r, 500));
  };
  const phase = async (label: string, run: () => Promise<number>) => {
    await signal();
    // With STREAM_CPU_STRACE=<dir>, syscall counts of each process during the phase (strace -c).
    const straces: ChildProcess[] = process.env['STREAM_CPU_STRACE']
      ? pids.map((p, i) =>
          spawn('strace', [
            '-c',
            '-f',
            '-p',
            String(p),
            '-o',
            `${process.env['STREAM_CPU_STRACE']}/${label.slice(0, 3)}-${i}.txt`,
          ]),
        )
      : [];
    if (straces.length) await new Promise((r) => setTimeout(r, 1000));
    const before = pids.map((p) => cpuUs([p]));
    const self0 = process.cpuUsage();
    const t0 = performance.now();
    const tokens = await run();
    const ms = performance.now() - t0;
    const self = process.cpuUsage(self0);
    const after = pids.map((p) => cpuUs([p]));
    for (const st of straces) st.kill('SIGINT');
    if (straces.length) await new Promise((r) => setTimeout(r, 1000));
    await signal();
    console.log(`\n${label}: ${tokens} tokens, ${(tokens / (ms / 1000)).toFixed(0)} tokens/s`);
    pids.forEach((p, i) =>
      console.log(`  pid ${p} ${names[i]}: ${((after[i]! - before[i]!) / tokens).toFixed(1)} us CPU/token`),
    );
    console.log(`  client (this process): ${((self.user + self.system) / tokens).toFixed(1)} us CPU/token`);
  };
  await phase(`one streamed request at a time, ${SINGLE} requests`, async () => {
    let n = 0;
    for (let i = 0; i < SINGLE; i++) n += await one(i, true);
    return n;
  });
  const med = (k: number) =>
    marks
      .map((m) => m[k]!)
      .sort((a, b) => a - b)
      [marks.length >> 1]!.toFixed(2);
  console.log(
    `  timeline (median ms): headers ${med(0)}, first content ${med(1)}, last content ${med(2)}, end ${med(3)}`,
  );
  await phase(`16 streamed requests at once, ${ROUNDS} rounds`, async () => {
    let n = 0;
    for (let r = 0; r < ROUNDS; r++)
      n += (await Promise.all(Array.from({ length: 16 }, (_, i) => one(i)))).reduce((a, b) => a + b, 0);
    return n;
  });
} finally {
  await berth[Symbol.asyncDispose]();
}
