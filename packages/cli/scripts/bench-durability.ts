// Figures for the durable store (issue #3), measured in one run with the targets interleaved (A B C A B C ...):
//   1. /run at concurrency 50 plus completion by a real worker process: jobs/s end to end, per store;
//   2. queued jobs with no worker: heap growth per queued job (memory store vs SQLite), database size;
//   3. restart: time to reopen a data dir holding those queued jobs and answer `ready`.
//
// Run after `npm run build`:  node --expose-gc --import tsx packages/cli/scripts/bench-durability.ts [--jobs 3000] [--rounds 3] [--queued 20000]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createServer, silentLogger, type Store } from '@berth/server';
import { MemoryStore } from '@berth/server/memory';
import { SqliteStore } from '@berth/server/sqlite';
import { REPO_ROOT } from '../../../tests/e2e/harness.test-helpers.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '3' },
    queued: { type: 'string', default: '20000' },
  },
});
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const QUEUED = Number(values.queued);
const KEY = 'bench-key';
const TOKEN = 'bench-token';
const dir = mkdtempSync(join(tmpdir(), 'berth-bench-dur-'));
let fileNo = 0;

type Target = { name: string; make: () => Store };
const TARGETS: Target[] = [
  { name: 'memory', make: () => new MemoryStore() },
  { name: 'sqlite-normal', make: () => new SqliteStore({ file: join(dir, `n-${++fileNo}.sqlite`) }) },
  { name: 'sqlite-full', make: () => new SqliteStore({ file: join(dir, `f-${++fileNo}.sqlite`), durability: 'full' }) },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const fmt = (xs: number[], unit: string, digits = 0) =>
  `median ${median(xs).toFixed(digits)} ${unit} (min ${Math.min(...xs).toFixed(digits)}, max ${Math.max(...xs).toFixed(digits)})`;

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

async function serve(store: Store) {
  const server = createServer({
    store,
    apiKeys: [KEY],
    workerTokens: [TOKEN],
    endpoints: ['echo'],
    logger: silentLogger,
    rateLimits: { enabled: false },
  });
  const { url } = await server.listen({ port: 0 });
  return { server, url };
}

function worker(url: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'examples/basic/echo.ts')], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      BERTH_URL: url,
      BERTH_ENDPOINT_ID: 'echo',
      BERTH_WORKER_TOKEN: TOKEN,
      BERTH_CONCURRENCY: '64',
      BERTH_LOG_LEVEL: 'error',
    },
    stdio: 'ignore',
  });
}

async function api(url: string, method: string, path: string, body?: unknown) {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return (await res.json()) as Record<string, any>;
}

async function until(fn: () => Promise<boolean>, timeoutMs: number) {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** 1. /run x JOBS at concurrency 50, until all COMPLETED; jobs/s and control-plane CPU ms per job. */
async function runAndComplete(t: Target): Promise<{ jobsPerSec: number; cpuPerJob: number }> {
  const { server, url } = await serve(t.make());
  const w = worker(url);
  try {
    await until(async () => (await api(url, 'GET', '/v2/echo/health')).workers.idle === 1, 20_000);
    const t0 = performance.now();
    const c0 = cpuMs();
    let next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < JOBS) {
          const n = next++;
          const r = await api(url, 'POST', '/v2/echo/run', { input: { n } });
          if (r.status !== 'IN_QUEUE') throw new Error(`run refused: ${JSON.stringify(r)}`);
        }
      }),
    );
    await until(async () => (await api(url, 'GET', '/v2/echo/health')).jobs.completed >= JOBS, 120_000);
    const secs = (performance.now() - t0) / 1000;
    return { jobsPerSec: JOBS / secs, cpuPerJob: (cpuMs() - c0) / JOBS };
  } finally {
    w.kill('SIGKILL');
    await server.close({ drainMs: 0 });
  }
}

/** 2 + 3. QUEUED jobs with no worker: heap growth per job; then restart time on the same data (SQLite). */
async function fillAndRestart(t: Target): Promise<{ heapPerJob: number; dbBytes: number; restartMs: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.memoryUsage().heapUsed;
  const store = t.make();
  const { server, url } = await serve(store);
  let next = 0;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < QUEUED) {
        const n = next++;
        await api(url, 'POST', '/v2/echo/run', { input: { n, prompt: 'a queued job with a small input' } });
      }
    }),
  );
  (globalThis as { gc?: () => void }).gc?.();
  const heapPerJob = (process.memoryUsage().heapUsed - before) / QUEUED;
  await server.close({ drainMs: 0 });
  if (!(store instanceof SqliteStore)) return { heapPerJob, dbBytes: 0, restartMs: NaN };
  const file = store.db.name;
  const dbBytes = statSync(file).size;
  const t0 = performance.now();
  const again = createServer({ store: new SqliteStore({ file }), apiKeys: [KEY], logger: silentLogger });
  const { recovered } = await again.listen({ port: 0 });
  const restartMs = performance.now() - t0;
  if (recovered.queued !== QUEUED) throw new Error(`recovered ${recovered.queued}, expected ${QUEUED}`);
  await again.close({ drainMs: 0 });
  return { heapPerJob, dbBytes, restartMs };
}

const results = new Map<
  string,
  { jobsPerSec: number[]; cpuPerJob: number[]; heapPerJob: number[]; dbBytes: number[]; restartMs: number[] }
>();
for (const t of TARGETS)
  results.set(t.name, { jobsPerSec: [], cpuPerJob: [], heapPerJob: [], dbBytes: [], restartMs: [] });
for (let round = 1; round <= ROUNDS; round++) {
  for (const t of TARGETS) {
    const r = results.get(t.name)!;
    const a = await runAndComplete(t);
    r.jobsPerSec.push(a.jobsPerSec);
    r.cpuPerJob.push(a.cpuPerJob);
    const b = await fillAndRestart(t);
    r.heapPerJob.push(b.heapPerJob);
    r.dbBytes.push(b.dbBytes);
    r.restartMs.push(b.restartMs);
    console.error(
      `round ${round}/${ROUNDS} ${t.name}: ${a.jobsPerSec.toFixed(0)} jobs/s, heap ${b.heapPerJob.toFixed(0)} B/queued job`,
    );
  }
}
const base = median(results.get('memory')!.jobsPerSec);
console.log(`\n/run (c=50) + completion by one worker process (concurrency 64), ${JOBS} jobs x ${ROUNDS} rounds:`);
for (const [name, r] of results) {
  console.log(
    `  ${name.padEnd(14)} ${fmt(r.jobsPerSec, 'jobs/s')}  = ${(median(r.jobsPerSec) / base).toFixed(2)} x memory; control-plane+client CPU ${fmt(r.cpuPerJob, 'ms/job', 2)}`,
  );
}
console.log(`\n${QUEUED} queued jobs, no worker:`);
for (const [name, r] of results) {
  const db =
    name === 'memory'
      ? ''
      : `; database ${(median(r.dbBytes) / 1e6).toFixed(1)} MB; restart to ready ${fmt(r.restartMs, 'ms')}`;
  console.log(`  ${name.padEnd(14)} heap growth ${fmt(r.heapPerJob, 'B/job')}${db}`);
}
rmSync(dir, { recursive: true, force: true });
process.exit(0);
