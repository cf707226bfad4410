/** /runsync at concurrency 1 and 50; /run at 50 then completions; /status reads. Echo worker connected. */
import { closedLoop, request } from '../lib/http.js';
import { totalCpuMs, until } from '../lib/proc.js';
import type { Running, Workload } from '../targets/types.js';
import { input, isEcho, type BenchConfig, type Figures } from './types.js';

function check(what: string, r: { ok: number; failed: number; firstError?: string }) {
  if (r.failed > 0 || r.ok === 0)
    throw new Error(`${what}: ${r.ok} ok, ${r.failed} failed (${r.firstError ?? 'no calls'})`);
}

/** `/runsync` always (it is also the warm-up); `/run` and `/status` when `workloads` lists them. */
export async function throughput(
  run: Running,
  cfg: BenchConfig,
  workloads: readonly Workload[],
  pids: () => number[],
): Promise<Figures> {
  const base = run.base('echo');
  const h = run.headers;
  const f: Figures = {};
  const runsync = async (n: number) => {
    const r = await request(`${base}/runsync`, 'POST', { input: input(n) }, h);
    return r.status === 200 ? isEcho(r.body, n) : `HTTP ${r.status}: ${JSON.stringify(r.body)}`;
  };
  check('warm-up', await closedLoop(Math.min(cfg.concurrency, 10), runsync, { count: cfg.warmup }));
  if (cfg.warmupSeconds > 0)
    check('warm-up at c=50', await closedLoop(cfg.concurrency, runsync, { seconds: cfg.warmupSeconds }));

  const c1 = await closedLoop(1, runsync, { count: cfg.c1Calls, seconds: 30 });
  check('/runsync c=1', c1);
  f['runsync_c1_p50_ms'] = c1.p50;
  f['runsync_c1_p99_ms'] = c1.p99;

  // The database's own processes (PostgreSQL backends), when the target has them apart from `serverProcs`.
  const db = async () => (run.dbCpuMs ? await run.dbCpuMs() : NaN);
  let db0 = await db();
  let cpu0 = totalCpuMs(pids());
  const c50 = await closedLoop(cfg.concurrency, runsync, { seconds: cfg.c50Seconds });
  check(`/runsync c=${cfg.concurrency}`, c50);
  f['runsync_c50_rps'] = c50.perSecond;
  f['runsync_c50_p50_ms'] = c50.p50;
  f['runsync_c50_p99_ms'] = c50.p99;
  f['runsync_c50_cpu_ms_per_job'] = (totalCpuMs(pids()) - cpu0) / c50.ok;
  if (run.dbCpuMs) f['runsync_c50_db_cpu_ms_per_job'] = ((await db()) - db0) / c50.ok;
  if (!workloads.includes('run')) return f;

  // /run at c=50, then wait until the worker completed them all.
  const done0 = await run.completed('echo');
  const ids: string[] = [];
  db0 = await db();
  cpu0 = totalCpuMs(pids());
  const t0 = performance.now();
  const sub = await closedLoop(
    cfg.concurrency,
    async (n) => {
      const r = await request(`${base}/run`, 'POST', { input: input(n) }, h);
      if (r.status !== 200 || typeof r.body?.id !== 'string') return `HTTP ${r.status}: ${JSON.stringify(r.body)}`;
      ids[n] = r.body.id as string;
      return true;
    },
    { count: cfg.runJobs },
  );
  check(`/run c=${cfg.concurrency}`, sub);
  f['run_c50_submit_rps'] = sub.perSecond;
  await until(
    async () => (await run.completed('echo')) - done0 >= cfg.runJobs,
    120_000,
    `${cfg.runJobs} completions`,
    5,
  );
  f['run_completions_per_s'] = cfg.runJobs / ((performance.now() - t0) / 1000);
  f['run_cpu_ms_per_job'] = (totalCpuMs(pids()) - cpu0) / cfg.runJobs;
  if (run.dbCpuMs) f['run_db_cpu_ms_per_job'] = ((await db()) - db0) / cfg.runJobs;

  if (!workloads.includes('status')) return f;
  // /status reads of those (completed) jobs.
  const st = await closedLoop(
    cfg.concurrency,
    async (n) => {
      const i = n % ids.length;
      const r = await request(`${base}/status/${ids[i]}`, 'GET', undefined, h);
      return r.status === 200 ? isEcho(r.body, i) : `HTTP ${r.status}: ${JSON.stringify(r.body)}`;
    },
    { seconds: cfg.statusSeconds },
  );
  check('/status', st);
  f['status_c50_rps'] = st.perSecond;
  return f;
}
