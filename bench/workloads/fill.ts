/**
 * Queue `fillJobs` jobs with no worker connected (heap, RSS and store growth per job, after a warm-up), then
 * connect the worker and drain them all (warm-up jobs included).
 */
import { closedLoop, request } from '../lib/http.js';
import { rssBytes, totalCpuMs, until } from '../lib/proc.js';
import type { Running } from '../targets/types.js';
import { input, type BenchConfig, type Figures } from './types.js';

export async function fill(run: Running, cfg: BenchConfig): Promise<Figures> {
  const base = run.base('echo');
  const rss = () => run.serverProcs().reduce((s, p) => s + rssBytes(p.pid), 0);
  const submit = async (n: number): Promise<true | string> => {
    const r = await request(`${base}/run`, 'POST', { input: input(n) }, run.headers);
    return r.status === 200 && typeof r.body?.id === 'string' ? true : `HTTP ${r.status}: ${JSON.stringify(r.body)}`;
  };
  // Warm-up jobs first (queued too), so one-off costs (compiled code, parser pools, first pages) are not
  // divided among the measured jobs: they were ~1 MB, i.e. 100-300 B/job at 5-10k jobs.
  const warm = Math.min(1000, Math.ceil(cfg.fillJobs / 10));
  const w = await closedLoop(cfg.concurrency, submit, { count: warm });
  if (w.failed > 0) throw new Error(`fill warm-up: ${w.failed} /run calls failed (${w.firstError})`);
  const heap0 = await run.heapUsed();
  const rss0 = rss();
  const store0 = await run.storeBytes();
  const sub = await closedLoop(cfg.concurrency, (n) => submit(warm + n), { count: cfg.fillJobs });
  if (sub.failed > 0) throw new Error(`fill: ${sub.failed} /run calls failed (${sub.firstError})`);
  const f: Figures = {
    fill_jobs: cfg.fillJobs,
    fill_submit_rps: sub.perSecond,
    fill_heap_b_per_job: ((await run.heapUsed()) - heap0) / cfg.fillJobs,
    fill_rss_b_per_job: (rss() - rss0) / cfg.fillJobs,
    fill_store_b_per_job: ((await run.storeBytes()) - store0) / cfg.fillJobs,
  };
  const worker = await run.startWorker('echo');
  const pids = () => [...run.serverProcs().map((p) => p.pid), worker.proc.pid];
  const cpu0 = totalCpuMs(pids());
  const t0 = performance.now();
  await worker.go();
  const total = warm + cfg.fillJobs;
  await until(async () => (await run.completed('echo')) >= total, 600_000, `the drain of ${total} jobs`, 20);
  const secs = (performance.now() - t0) / 1000;
  f['drain_s'] = secs;
  f['drain_jobs_per_s'] = total / secs;
  f['drain_cpu_ms_per_job'] = (totalCpuMs(pids()) - cpu0) / total;
  await worker.stop();
  return f;
}
