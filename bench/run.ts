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
import { volumeMarkdown, volumeRun } from './volume/run-volume.js';
import { batchMarkdown, batchRun } from './batch/run-batch.js';

const USAGE = `usage: npm run bench -- [options]    (or: node --import tsx bench/run.ts [options])

Every target side by side in one run; prints a markdown table and the goals, writes JSON.

  --quick               the small preset: under 3 minutes (one round of every row, then two of the goal rows)
  --rounds N            rounds of every row (full 3, quick 1)
  --goal-rounds N       rounds of the targets and workloads the goals read (default: --rounds; quick 3)
  --seconds S           /runsync c=50 window (full 4, quick 1)
  --goal-seconds S      the same window for the goals' rows (default: --seconds; quick 2.5)
  --warmup-seconds S    untimed /runsync c=50 loop before the timed workloads (full 2, quick 1; 0: none)
  --fill N              jobs queued with no worker (full 100000, quick 20000)
  --fill-rounds N       rounds that run the fill (full 1, quick 0; the goals' rows: quick 3)
  --only a,b            targets by name: ${TARGETS.map((t) => t.name).join(', ')}
  --skip w,w            workloads to leave out: runsync, run, status, fill, stream, big
  --out FILE            the JSON (default bench/results/latest.json)
  --max-minutes M       hard stop (full 90, quick 5)
  --volume              the volume run instead (bench/volume/): a deep queue on SQLite and PostgreSQL, drain,
                        retention sweep under traffic; not in --quick
  --volume-jobs N       jobs queued by the volume run (default 1000000; figures at N/100, N/10, N)
  --volume-stores s,s   sqlite, postgres (default both)
  --batch               the Batch Jobs run instead (bench/batch/): N echo requests added to a batch on SQLite, run,
                        paged; the same jobs through /run; control-plane RSS; not in --quick
  --batch-jobs N        requests of the batch run (default 100000)
  --batch-store s       sqlite (default) or postgres (BENCH_DATABASE_URL)
  -h, --help            this text

Environment: BENCH_BERTH_BASELINE=<other checkout, built> adds <name>@base rows; BENCH_CPU_PROF=<dir> writes
CPU profiles; BENCH_DATABASE_URL for the PostgreSQL rows. See bench/README.md.
`;

let values: ReturnType<typeof parse>['values'];
function parse() {
  return parseArgs({
    options: {
      help: { type: 'boolean', short: 'h', default: false },
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      'goal-rounds': { type: 'string' },
      fill: { type: 'string' },
      'fill-rounds': { type: 'string' },
      seconds: { type: 'string' },
      'goal-seconds': { type: 'string' },
      'warmup-seconds': { type: 'string' },
      only: { type: 'string' },
      skip: { type: 'string' },
      out: { type: 'string' },
      'max-minutes': { type: 'string' },
      volume: { type: 'boolean', default: false },
      'volume-jobs': { type: 'string' },
      'volume-stores': { type: 'string' },
      batch: { type: 'boolean', default: false },
      'batch-jobs': { type: 'string' },
      'batch-store': { type: 'string' },
    },
  });
}
try {
  ({ values } = parse());
} catch (err) {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
/** A numeric flag, or a usage error naming it. */
function num(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0) {
    process.stderr.write(`bench: --${flag} takes a number >= 0 (got ${JSON.stringify(v)})\n\n${USAGE}`);
    process.exit(2);
  }
  return n;
}
if (values.batch) {
  const jobs = num('batch-jobs', values['batch-jobs']) ?? 100_000;
  setTimeout(() => {
    process.stderr.write('bench: the batch run still running after 60 min; giving up\n');
    process.exit(2);
  }, 60 * 60_000).unref();
  const started = new Date().toISOString();
  const kind = values['batch-store'] === 'postgres' ? 'postgres' : 'sqlite';
  const row = await batchRun(jobs, (l) => process.stderr.write(`${l}\n`), kind);
  const md = `Batch Jobs run (${kind}), ${started}, ${cpus().length} CPUs, load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} at the end.\n\n${batchMarkdown(row)}`;
  process.stdout.write(`${md}\n`);
  const file = resolve(values.out ?? `${BENCH_DIR}/results/batch.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ date: started, row, markdown: md }, null, 2)}\n`);
  process.exit(0);
}
if (values.volume) {
  const jobs = num('volume-jobs', values['volume-jobs']) ?? 1_000_000;
  const stores = (values['volume-stores'] ?? 'sqlite,postgres').split(',') as ('sqlite' | 'postgres')[];
  const maxMinutes = num('max-minutes', values['max-minutes']) ?? 240;
  setTimeout(() => {
    process.stderr.write(`bench: still running after ${maxMinutes} min; giving up\n`);
    process.exit(2);
  }, maxMinutes * 60_000).unref();
  const started = new Date().toISOString();
  const results = [];
  for (const kind of stores) results.push(await volumeRun(kind, jobs, (l) => process.stderr.write(`${l}\n`)));
  const md = `Volume run, ${started}, ${cpus().length} CPUs, load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} at the end.\n\n${volumeMarkdown(results)}`;
  process.stdout.write(`${md}\n`);
  const file = resolve(values.out ?? `${BENCH_DIR}/results/volume.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ date: started, results, markdown: md }, null, 2)}\n`);
  process.exit(0);
}
const cfg = { ...(values.quick ? QUICK : FULL) };
cfg.rounds = num('rounds', values.rounds) ?? cfg.rounds;
const goalRounds = num('goal-rounds', values['goal-rounds']) ?? (values.rounds ? cfg.rounds : cfg.goalRounds);
if (goalRounds !== undefined) cfg.goalRounds = goalRounds;
cfg.fillJobs = num('fill', values.fill) ?? cfg.fillJobs;
const fillRounds = num('fill-rounds', values['fill-rounds']);
if (fillRounds !== undefined) {
  cfg.fillRounds = fillRounds;
  delete cfg.goalFillRounds;
}
cfg.c50Seconds = num('seconds', values.seconds) ?? cfg.c50Seconds;
const goalSeconds = num('goal-seconds', values['goal-seconds']) ?? (values.seconds ? cfg.c50Seconds : cfg.goalSeconds);
if (goalSeconds !== undefined) cfg.goalSeconds = goalSeconds;
cfg.warmupSeconds = num('warmup-seconds', values['warmup-seconds']) ?? cfg.warmupSeconds;
if (values.skip) cfg.skip = values.skip.split(',');
const only = values.only?.split(',');
const targets = only ? TARGETS.filter((t) => only.includes(t.name)) : TARGETS;
if (targets.length === 0) {
  process.stderr.write(`bench: --only matched no target; targets: ${TARGETS.map((t) => t.name).join(', ')}\n`);
  process.exit(2);
}

// Stopped by a signal: exit through process.exit so lib/proc.ts's exit hook kills every process the bench started.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));

// Bounded: whatever happens, the bench stops by itself.
const maxMinutes = num('max-minutes', values['max-minutes']) ?? (values.quick ? 5 : 90);
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
  rounds:
    cfg.goalRounds && cfg.goalRounds > cfg.rounds ? `${cfg.rounds} (goal rows: ${cfg.goalRounds})` : String(cfg.rounds),
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
