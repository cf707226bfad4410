// `node --import tsx bench/worker-ab.ts [--a K=V,..] [--b K=V,..] [--a-bench <dir>] [--b-bench <dir>] [--rounds N]`:
// worker CPU per job of two worker variants against one `berth serve --store memory`, `/runsync` at c=50,
// interleaved A B B A A B ... (pairs alternate, so a drift of the machine's load falls on both alike; a fresh worker process per window, warmed up first). A variant is the worker's
// environment (`--a`, `--b`) and the bench folder whose worker runs (`--a-bench`, `--b-bench`: another built
// checkout's `bench/`, so its `@berth/worker`). Worker CPU is its process.cpuUsage() (lib/heap-probe.mjs
// preloaded); server CPU is from /proc. Prints each window, then mean, min–max and B ÷ A.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { closedLoop, request } from './lib/http.js';
import { BENCH_DIR, cpuUsageMs, totalCpuMs } from './lib/proc.js';
import { startBerth, type BerthFlavour } from './targets/berth/index.js';
import { input, isEcho } from './workloads/types.js';

const { values } = parseArgs({
  options: {
    a: { type: 'string', default: '' },
    b: { type: 'string', default: '' },
    'a-bench': { type: 'string' },
    'b-bench': { type: 'string' },
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '4' },
    'warmup-seconds': { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '50' },
  },
});
const env = (s: string): Record<string, string> =>
  Object.fromEntries(
    s
      .split(',')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
const variants = [
  { name: 'A', env: env(values.a), benchDir: values['a-bench'] },
  { name: 'B', env: env(values.b), benchDir: values['b-bench'] },
];
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const c = Number(values.concurrency);

const PROBE = join(BENCH_DIR, 'lib/heap-probe.mjs');
const flavour: BerthFlavour = { name: 'ab', description: 'worker A/B', args: () => ['--store', 'memory'] };
const run = await startBerth(flavour, '');
const base = run.base('echo');
const runsync = async (n: number) => {
  const r = await request(`${base}/runsync`, 'POST', { input: input(n) }, run.headers);
  return r.status === 200 ? isEcho(r.body, n) : `HTTP ${r.status}: ${JSON.stringify(r.body)}`;
};
const figures: Record<string, { worker: number[]; server: number[]; rps: number[] }> = {};
const log = (line: string) => process.stdout.write(`${line}\n`);
log(
  `load at start: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
try {
  for (let round = 0; round < rounds; round++) {
    for (const v of round % 2 === 0 ? variants : [...variants].reverse()) {
      // The probe answers 'cpu' with process.cpuUsage() (µs; /proc's 10 ms ticks are too coarse for ~0.05 ms/job).
      flavour.workerEnv = { BERTH_LOG_LEVEL: 'error', NODE_OPTIONS: `--import ${PROBE}`, ...v.env };
      if (v.benchDir) flavour.benchDir = v.benchDir;
      else delete flavour.benchDir;
      const worker = await run.startWorker('echo');
      await worker.go();
      await closedLoop(c, runsync, { seconds: Number(values['warmup-seconds']) });
      const server = run.serverProcs().map((p) => p.pid);
      const w0 = await cpuUsageMs(worker.proc);
      const s0 = totalCpuMs(server);
      const r = await closedLoop(c, runsync, { seconds });
      if (r.failed > 0) throw new Error(`${v.name}: ${r.failed} failed (${r.firstError})`);
      const f = (figures[v.name] ??= { worker: [], server: [], rps: [] });
      f.worker.push(((await cpuUsageMs(worker.proc)) - w0) / r.ok);
      f.server.push((totalCpuMs(server) - s0) / r.ok);
      f.rps.push(r.perSecond);
      await worker.stop();
      const load = loadavg()[0]!.toFixed(2);
      log(
        `round ${round + 1} ${v.name}: worker ${f.worker.at(-1)!.toFixed(4)} ms/job, server ${f.server.at(-1)!.toFixed(4)} ms/job, ${Math.round(r.perSecond)} jobs/s (load ${load})`,
      );
    }
  }
} finally {
  await run.stop();
}
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const fmt = (xs: number[]) =>
  `${mean(xs).toFixed(4)} (${Math.min(...xs).toFixed(4)}–${Math.max(...xs).toFixed(4)}, n=${xs.length})`;
for (const v of variants) {
  const f = figures[v.name]!;
  log(
    `${v.name} ${JSON.stringify(v.env)}: worker ms/job ${fmt(f.worker)}; server ${fmt(f.server)}; jobs/s ${fmt(f.rps)}`,
  );
}
const a = figures['A']!;
const b = figures['B']!;
const perRound = b.worker.map((x, i) => x / a.worker[i]!);
log(
  `worker CPU per job B ÷ A: ${(mean(b.worker) / mean(a.worker)).toFixed(3)} (per round ${perRound.map((x) => x.toFixed(3)).join(' ')})`,
);
log(
  `load at end: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
