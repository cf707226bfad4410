/** Berth: the real `berth serve` (packages/cli/dist/bin.js) and real @berth/worker processes. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, freePort, heapUsed, REPO_ROOT, start, startTs, type Proc } from '../../lib/proc.js';
import { dirBytes, health, healthWorker } from '../common.js';
import type { Running, Target, Workload } from '../types.js';

export const BIN = join(REPO_ROOT, 'packages/cli/dist/bin.js');
const PROBE = join(BENCH_DIR, 'lib/heap-probe.mjs');
const KEY = 'berth_bench_key';
const TOKEN = 'berthw_bench_token';
const ALL: Workload[] = ['runsync', 'run', 'status', 'fill', 'stream', 'big'];

export interface BerthFlavour {
  name: string;
  description: string;
  /** Extra `berth serve` arguments (store and durability). */
  args: (dir: string) => string[];
  /** Where the store's files are, if it has any. */
  dataDir?: (dir: string) => string;
  /** Extra environment for `berth serve` (e.g. a database URL). */
  env?: Record<string, string>;
  /** The `berth` binary (default: this checkout's packages/cli/dist/bin.js). */
  bin?: string;
  /** The bench folder whose worker (and so whose `@berth/worker`) runs (default: this checkout's). */
  benchDir?: string;
  /** Extra environment for the worker (default: `BERTH_LOG_LEVEL=error`). */
  workerEnv?: Record<string, string>;
  /** Started before `berth serve` (a trace receiver): extra environment for it and the worker, and its stop. */
  prepare?: () => Promise<{ env: Record<string, string>; stop: () => Promise<void> }>;
}

/** Starts `berth serve` with `flavour`'s store flags, rate limits off, and the heap probe preloaded. */
export async function startBerth(flavour: BerthFlavour, dir: string): Promise<Running> {
  const bin = flavour.bin ?? BIN;
  if (!existsSync(bin)) throw new Error(`${bin} does not exist: run \`npm run build\` first`);
  const port = await freePort();
  const side = await flavour.prepare?.();
  const prepared = side?.env ?? {};
  // BENCH_CPU_PROF=<dir>: write V8 CPU profiles of the control plane and workers there (see README.md).
  const prof = process.env['BENCH_CPU_PROF'] ? ['--cpu-prof', '--cpu-prof-dir', process.env['BENCH_CPU_PROF']] : [];
  const t0 = performance.now();
  const serve = start(
    process.execPath,
    [
      ...prof,
      '--expose-gc',
      '--import',
      PROBE,
      bin,
      'serve',
      '--port',
      String(port),
      '--endpoint',
      'echo,stream',
      '--log-level',
      'warn',
      ...flavour.args(dir),
    ],
    {
      env: {
        ...process.env,
        ...flavour.env,
        ...prepared,
        BERTH_API_KEY: KEY,
        BERTH_WORKER_TOKEN: TOKEN,
        BERTH_RATE_LIMITS: 'off',
        NO_COLOR: '1',
      },
      ipc: true,
    },
  );
  await serve.waitFor(/Press Ctrl-C to stop/, 60_000); // a loaded machine can take 20 s to start it
  const readyMs = performance.now() - t0;
  const url = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${KEY}` };
  const workers = new Set<Proc>();
  const base = (ep: string) => `${url}/v2/${ep}`;
  return {
    readyMs,
    base,
    headers,
    serverProcs: () => [serve],
    heapUsed: () => heapUsed(serve),
    storeBytes: async () => (flavour.dataDir ? dirBytes(flavour.dataDir(dir)) : NaN),
    startWorker: async (ep) => {
      const proc = startTs(
        join(flavour.benchDir ?? BENCH_DIR, 'targets/berth/worker.ts'),
        {
          BERTH_URL: url,
          BERTH_ENDPOINT_ID: ep,
          BERTH_WORKER_TOKEN: TOKEN,
          BERTH_LOG_LEVEL: 'error',
          BENCH_HOLD: '1',
          ...prepared,
          ...flavour.workerEnv,
        },
        { ipc: true, nodeArgs: prof },
      );
      workers.add(proc);
      return healthWorker(proc, base(ep), headers);
    },
    completed: async (ep) => (await health(base(ep), headers)).completed,
    stop: async () => {
      // SIGTERM when profiling: the processes exit by themselves and write their profiles.
      const signal = prof.length ? 'SIGTERM' : 'SIGKILL';
      await Promise.all([...workers].map((w) => w.kill(signal)));
      await serve.kill(signal);
      await side?.stop();
    },
  };
}

export function berthTarget(flavour: BerthFlavour): Target {
  return {
    name: flavour.name,
    description: flavour.description,
    workloads: ALL,
    start: (dir) => startBerth(flavour, dir),
  };
}

const FLAVOURS: BerthFlavour[] = [
  { name: 'berth-memory', description: '`berth serve --store memory`', args: () => ['--store', 'memory'] },
  {
    name: 'berth-sqlite-normal',
    description: '`berth serve` SQLite, synchronous=NORMAL (default)',
    args: (d) => ['--data-dir', d],
    dataDir: (d) => d,
  },
  {
    name: 'berth-sqlite-full',
    description: '`berth serve --durability full` (fsync every commit)',
    args: (d) => ['--data-dir', d, '--durability', 'full'],
    dataDir: (d) => d,
  },
];
/**
 * BENCH_BERTH_BASELINE=<another checkout, built> adds a `<name>@base` row after each Berth row, running that
 * checkout's `berth serve` and worker (its own `@berth/*` must resolve to its packages): before/after figures for a
 * change, interleaved in the same run.
 */
const baseline = process.env['BENCH_BERTH_BASELINE'];
/** A flavour's row, then its `<name>@base` row when BENCH_BERTH_BASELINE names a built checkout. */
export function withBaseline(f: BerthFlavour): Target[] {
  if (!baseline) return [berthTarget(f)];
  return [
    berthTarget(f),
    berthTarget({
      ...f,
      name: `${f.name}@base`,
      description: `${f.description}, built from ${baseline}`,
      bin: join(baseline, 'packages/cli/dist/bin.js'),
      benchDir: join(baseline, 'bench'),
    }),
  ];
}
export const BERTH_TARGETS: Target[] = FLAVOURS.flatMap(withBaseline);
