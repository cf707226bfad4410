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
const ALL: Workload[] = ['runsync', 'run', 'status', 'fill', 'stream'];

export interface BerthFlavour {
  name: string;
  description: string;
  /** Extra `berth serve` arguments (store and durability). */
  args: (dir: string) => string[];
  /** Where the store's files are, if it has any. */
  dataDir?: (dir: string) => string;
  /** Extra environment for `berth serve` (e.g. a database URL). */
  env?: Record<string, string>;
}

/** Starts `berth serve` with `flavour`'s store flags, rate limits off, and the heap probe preloaded. */
export async function startBerth(flavour: BerthFlavour, dir: string): Promise<Running> {
  if (!existsSync(BIN)) throw new Error(`${BIN} does not exist: run \`npm run build\` first`);
  const port = await freePort();
  const t0 = performance.now();
  const serve = start(process.execPath, ['--expose-gc', '--import', PROBE, BIN, 'serve', '--port', String(port), '--endpoint', 'echo,stream', '--log-level', 'warn', ...flavour.args(dir)], {
    env: { ...process.env, ...flavour.env, BERTH_API_KEY: KEY, BERTH_WORKER_TOKEN: TOKEN, BERTH_RATE_LIMITS: 'off', NO_COLOR: '1' },
    ipc: true,
  });
  await serve.waitFor(/Press Ctrl-C to stop/);
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
      const proc = startTs(join(BENCH_DIR, 'targets/berth/worker.ts'), { BERTH_URL: url, BERTH_ENDPOINT_ID: ep, BERTH_WORKER_TOKEN: TOKEN, BERTH_LOG_LEVEL: 'error', BENCH_HOLD: '1' }, { ipc: true });
      workers.add(proc);
      return healthWorker(proc, base(ep), headers);
    },
    completed: async (ep) => (await health(base(ep), headers)).completed,
    stop: async () => {
      await Promise.all([...workers].map((w) => w.kill()));
      await serve.kill();
    },
  };
}

export function berthTarget(flavour: BerthFlavour): Target {
  return { name: flavour.name, description: flavour.description, workloads: ALL, start: (dir) => startBerth(flavour, dir) };
}

export const BERTH_TARGETS: Target[] = [
  berthTarget({ name: 'berth-memory', description: '`berth serve --store memory`', args: () => ['--store', 'memory'] }),
  berthTarget({ name: 'berth-sqlite-normal', description: '`berth serve` SQLite, synchronous=NORMAL (default)', args: (d) => ['--data-dir', d], dataDir: (d) => d }),
  berthTarget({ name: 'berth-sqlite-full', description: '`berth serve --durability full` (fsync every commit)', args: (d) => ['--data-dir', d, '--durability', 'full'], dataDir: (d) => d }),
];
