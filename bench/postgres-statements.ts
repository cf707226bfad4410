// `node --import tsx bench/postgres-statements.ts [--replicas N] [--jobs N] [--phases c1,c50,run]`: statements (each one round trip) and
// notifications per job of the PostgreSQL store, and the CPU per job of its PostgreSQL backends. Starts the
// `berth-postgres` set (N replicas, one echo worker on the first) with `lib/pg-count.mjs` preloaded into every
// `berth serve`, then runs /runsync at c=1, /runsync at c=50 and /run at c=50 (until completed) and prints, per
// phase, the statements per job by SQL text.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { closedLoop, request } from './lib/http.js';
import { BENCH_DIR, cpuMs, REPO_ROOT, until } from './lib/proc.js';
import { startSet } from './targets/berth-postgres/index.js';
import { input, isEcho } from './workloads/types.js';

const { values } = parseArgs({
  options: { replicas: { type: 'string' }, jobs: { type: 'string' }, phases: { type: 'string' } },
});
const PHASES = (values.phases ?? 'c1,c50,run').split(',');
const REPLICAS = Number(values.replicas ?? 1);
const JOBS = Number(values.jobs ?? 1_000);
const dir = mkdtempSync(join(tmpdir(), 'berth-pg-statements-'));
const counts = join(dir, 'counts');
process.env['NODE_OPTIONS'] = `${process.env['NODE_OPTIONS'] ?? ''} --import ${join(BENCH_DIR, 'lib/pg-count.mjs')}`;
process.env['BENCH_PG_COUNT_DIR'] = counts;
process.env['BENCH_PG_COUNT_ROOT'] = REPO_ROOT;
mkdirSync(counts);

/** A statement's text, the claims riding in a finish marked (the text starts as the finish's). */
const label = (t: string) => (t.includes('UNION ALL SELECT c.*') ? `[finish + claims] ${t}` : t);

const run = await startSet(REPLICAS, join(dir, 'set'));
try {
  const w = await run.startWorker('echo');
  await w.go();
  const base = run.base('echo');
  const runsync = async (n: number) => {
    const r = await request(`${base}/runsync`, 'POST', { input: input(n) }, run.headers);
    return r.status === 200 ? isEcho(r.body, n) : `HTTP ${r.status}`;
  };
  /** Dumps and resets every replica's counters; answers the sums since the last dump. */
  const dump = async () => {
    for (const f of readdirSync(counts)) rmSync(join(counts, f));
    const pids = run.serverProcs().map((p) => p.pid);
    for (const pid of pids) process.kill(pid, 'SIGUSR2');
    await until(
      async () => readdirSync(counts).filter((f) => f.endsWith('.json')).length === pids.length,
      10_000,
      'counter dumps',
      20,
    );
    const by = new Map<string, number>();
    let notifications = 0;
    for (const f of readdirSync(counts).filter((x) => x.endsWith('.json'))) {
      const d = JSON.parse(readFileSync(join(counts, f), 'utf8')) as {
        notifications: number;
        statements: [string, number][];
      };
      notifications += d.notifications;
      for (const [t, n] of d.statements) by.set(t, (by.get(t) ?? 0) + n);
    }
    return { by, notifications };
  };
  const phase = async (name: string, jobs: number, body: () => Promise<void>) => {
    await dump();
    const procs = [...run.serverProcs().map((p) => p.pid), w.proc.pid];
    const proc0 = procs.map(cpuMs);
    const cpu0 = await run.dbCpuMs!();
    const t0 = performance.now();
    await body();
    const s = (performance.now() - t0) / 1000;
    const cpu = (await run.dbCpuMs!()) - cpu0;
    const perProc = procs.map((pid, i) => ((cpuMs(pid) - proc0[i]!) / jobs).toFixed(3));
    const { by, notifications } = await dump();
    const total = [...by.values()].reduce((a, b) => a + b, 0);
    console.log(
      `\n## ${name}: ${jobs} jobs in ${s.toFixed(1)} s; per job: ${(total / jobs).toFixed(2)} statements (round trips), ` +
        `${(notifications / jobs).toFixed(2)} notifications received, ${(cpu / jobs).toFixed(3)} ms PostgreSQL backend CPU; ` +
        `CPU ms per job of each replica and the worker: ${perProc.join(' ')}`,
    );
    for (const [t, n] of [...by].sort((a, b) => b[1] - a[1]).slice(0, 12))
      console.log(`${(n / jobs).toFixed(3).padStart(8)}  ${label(t).slice(0, 110)}`);
  };
  const loop = async (c: number) => {
    const r = await closedLoop(c, runsync, { count: JOBS });
    if (r.failed) throw new Error(`${r.failed} failed: ${r.firstError}`);
  };
  await loop(10); // warm-up
  if (PHASES.includes('c1')) await phase('/runsync c=1', JOBS, () => loop(1));
  if (PHASES.includes('c50')) await phase('/runsync c=50', JOBS, () => loop(50));
  if (PHASES.includes('run'))
    await phase('/run c=50 until completed', JOBS, async () => {
      const done0 = await run.completed('echo');
      const r = await closedLoop(
        50,
        async (n) => {
          const x = await request(`${base}/run`, 'POST', { input: input(n) }, run.headers);
          return x.status === 200 ? true : `HTTP ${x.status}`;
        },
        { count: JOBS },
      );
      if (r.failed) throw new Error(`${r.failed} failed: ${r.firstError}`);
      await until(async () => (await run.completed('echo')) - done0 >= JOBS, 60_000, 'completions', 100); // /health reads: few
    });
} finally {
  await run.stop();
  rmSync(dir, { recursive: true, force: true });
}
