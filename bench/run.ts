// `npm run bench [-- --quick] [--rounds N] [--fill N] [--only a,b] [--out file]`: every target side by side in
// one run (see README.md). Prints a markdown table and writes JSON (default bench/results/latest.json).
import { execSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { FULL, QUICK } from './config.js';
import { BENCH_DIR } from './lib/proc.js';
import { markdown, toJson } from './lib/report.js';
import { runBench } from './lib/runner.js';
import { TARGETS } from './targets/index.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    fill: { type: 'string' },
    'fill-rounds': { type: 'string' },
    seconds: { type: 'string' },
    'warmup-seconds': { type: 'string' },
    only: { type: 'string' },
    skip: { type: 'string' },
    out: { type: 'string' },
    'max-minutes': { type: 'string' },
  },
});
const cfg = { ...(values.quick ? QUICK : FULL) };
if (values.rounds) cfg.rounds = Number(values.rounds);
if (values.fill) cfg.fillJobs = Number(values.fill);
if (values['fill-rounds']) cfg.fillRounds = Number(values['fill-rounds']);
if (values.seconds) cfg.c50Seconds = Number(values.seconds);
if (values['warmup-seconds']) cfg.warmupSeconds = Number(values['warmup-seconds']);
if (values.skip) cfg.skip = values.skip.split(',');
const only = values.only?.split(',');
const targets = only ? TARGETS.filter((t) => only.includes(t.name)) : TARGETS;
if (targets.length === 0)
  throw new Error(`--only matched no target; targets: ${TARGETS.map((t) => t.name).join(', ')}`);

// Bounded: whatever happens, the bench stops by itself.
const maxMinutes = Number(values['max-minutes'] ?? (values.quick ? 5 : 90));
setTimeout(() => {
  process.stderr.write(`bench: still running after ${maxMinutes} min; giving up\n`);
  process.exit(2);
}, maxMinutes * 60_000).unref();

const cpuModel =
  /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? 'unknown';
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const meta: Record<string, string> = {
  mode: values.quick ? 'quick' : 'full',
  rounds: String(cfg.rounds),
  cpus: `${cpus().length} x ${cpuModel}`,
  node: process.version,
  redis: execSync('redis-server --version').toString().trim().split(' ')[2] ?? '',
  'load before': load(),
  date: new Date().toISOString(),
};
process.stderr.write(
  `bench: ${targets.map((t) => t.name).join(', ')}; ${JSON.stringify(cfg)}; load ${meta['load before']}\n`,
);
const t0 = performance.now();
const results = await runBench(targets, cfg, (l) => process.stderr.write(`${l}\n`));
meta['load after'] = load();
meta['duration'] = `${((performance.now() - t0) / 1000).toFixed(0)} s`;
const md = markdown(results, meta);
process.stdout.write(`${md}\n`);
const out = resolve(values.out ?? `${BENCH_DIR}/results/latest.json`);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ ...toJson(results, { ...meta, config: cfg }), markdown: md }, null, 2)}\n`);
process.stderr.write(`bench: wrote ${out}\n`);
process.exit(results.some((r) => r.errors.length > 0) ? 1 : 0);
