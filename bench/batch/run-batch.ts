/**
 * `npm run bench -- --batch [--batch-jobs N] [--batch-store postgres]`: Batch Jobs on SQLite (or PostgreSQL; issue
 * #38). On a fresh store (./server.ts)
 * with one echo worker (concurrency 64): add N echo requests (default 100,000) to a batch, 10,000 a call (add
 * rate), finalize it and time its end (finish rate), page through every result (1,000 a page); then the same N
 * jobs through /run (c=50 submits, the same worker) until all completed. The control plane's RSS is sampled every
 * 250 ms: before, after the adds, its peak while the batch runs, and after a GC at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedLoop, request } from '../lib/http.js';
import { BENCH_DIR, freePort, type Proc, release, startTs, until } from '../lib/proc.js';
import { health } from '../targets/common.js';
import { DATABASE_URL, dropSchema } from '../lib/pg.js';
import { randomBytes } from 'node:crypto';
import { input } from '../workloads/types.js';

const KEY = 'berth_batch_key';
const TOKEN = 'berthw_batch_token';
const PER_CALL = 10_000;
const MB = 1024 * 1024;

type BatchRow = Record<string, number>;

export async function batchRun(
  jobs: number,
  log: (l: string) => void,
  kind: 'sqlite' | 'postgres' = 'sqlite',
): Promise<BatchRow> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-batch-'));
  const schema = `bench_batch_${randomBytes(4).toString('hex')}`;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}/v2/echo`;
  const h = { authorization: `Bearer ${KEY}` };
  const server = startTs(
    join(BENCH_DIR, 'batch/server.ts'),
    {
      BATCH_DIR: dir,
      BATCH_STORE: kind,
      BATCH_SCHEMA: schema,
      DATABASE_URL,
      BATCH_KEY: KEY,
      BATCH_TOKEN: TOKEN,
      BATCH_JOBS: String(jobs),
      PORT: String(port),
    },
    { ipc: true, nodeArgs: ['--expose-gc'] },
  );
  const procs: Proc[] = [server];
  let heapMB = 0;
  const rss = (gc = false) =>
    new Promise<number>((resolve) => {
      const on = (a: { rssBytes?: number; heapBytes?: number }) => {
        if (typeof a?.rssBytes !== 'number') return;
        server.child.off('message', on);
        heapMB = (a.heapBytes ?? 0) / MB;
        resolve(a.rssBytes / MB);
      };
      server.child.on('message', on);
      server.child.send({ rss: true, gc });
    });
  const row: BatchRow = { jobs };
  try {
    await server.waitFor(/listening/, 60_000);
    const worker = startTs(
      join(BENCH_DIR, 'targets/berth/worker.ts'),
      {
        BERTH_URL: `http://127.0.0.1:${port}`,
        BERTH_ENDPOINT_ID: 'echo',
        BERTH_WORKER_TOKEN: TOKEN,
        BERTH_LOG_LEVEL: 'error',
        BENCH_HOLD: '1',
      },
      { ipc: true },
    );
    procs.push(worker);
    await release(worker);
    await until(async () => (await health(base, h)).workers > 0, 30_000, 'the worker', 20);
    row['rssStartMB'] = await rss(true);
    row['heapStartMB'] = heapMB;

    // 1. Add, PER_CALL requests a call.
    const created = await request(`${base}/batch`, 'POST', { name: 'bench' }, h);
    if (created.status !== 200) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
    const id = created.body.id as string;
    const t0 = performance.now();
    for (let from = 0; from < jobs; from += PER_CALL) {
      const body = Array.from({ length: Math.min(PER_CALL, jobs - from) }, (_, i) => ({ input: input(from + i) }));
      const r = await request(`${base}/batch/${id}/requests`, 'POST', body, h);
      if (r.status !== 200) throw new Error(`add: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    }
    const addS = (performance.now() - t0) / 1000;
    row['addPerSec'] = Math.round(jobs / addS);
    row['rssAfterAddMB'] = await rss(true);
    row['heapAfterAddMB'] = heapMB;
    log(`batch: added ${jobs} in ${addS.toFixed(1)} s`);

    // 2. Run: finalize, then poll the summary until the batch ends; RSS sampled meanwhile.
    let peak = row['rssAfterAddMB'];
    const sampler = setInterval(() => void rss().then((m) => (peak = Math.max(peak, m))), 250);
    const t1 = performance.now();
    const fin = await request(`${base}/batch/${id}/finalize`, 'POST', {}, h);
    if (fin.status !== 200) throw new Error(`finalize: ${fin.status} ${JSON.stringify(fin.body)}`);
    row['finalizeMs'] = Math.round(performance.now() - t1);
    let summary: Record<string, number> = {};
    await until(
      async () => {
        summary = (await request(`${base}/batch/${id}`, 'GET', undefined, h)).body;
        return summary['finishedAt'] !== undefined;
      },
      30 * 60_000,
      'the batch to end',
      200,
    );
    const runS = (performance.now() - t1) / 1000;
    clearInterval(sampler);
    row['batchFinishPerSec'] = Math.round(jobs / runS);
    row['rssPeakBatchMB'] = peak;
    row['rssGrowthMB'] = Math.round(peak - row['rssStartMB']);
    row['rssAfterBatchMB'] = await rss(true);
    row['heapAfterBatchMB'] = heapMB;
    if (summary['requestCompleted'] !== jobs) throw new Error(`batch ended with ${JSON.stringify(summary)}`);
    log(`batch: ran ${jobs} in ${runS.toFixed(1)} s`);

    // 3. Page through every result.
    const t2 = performance.now();
    const seen = new Set<number>();
    let cursor: string | null = null;
    do {
      const r = await request(
        `${base}/batch/${id}/requests?limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
        'GET',
        undefined,
        h,
      );
      for (const x of r.body.requests as { output: { n: number } }[]) seen.add(x.output.n);
      cursor = r.body.nextCursor as string | null;
    } while (cursor);
    if (seen.size !== jobs) throw new Error(`pages gave ${seen.size} distinct results, not ${jobs}`);
    row['pageAllMs'] = Math.round(performance.now() - t2);

    // 4. The same jobs through /run (c=50), until all completed.
    const before = (await health(base, h)).completed;
    const t3 = performance.now();
    const submit = async (n: number): Promise<true | string> => {
      const r = await request(`${base}/run`, 'POST', { input: input(n) }, h);
      return r.status === 200 ? true : `HTTP ${r.status}`;
    };
    let runPeak = 0;
    const runSampler = setInterval(() => void rss().then((m) => (runPeak = Math.max(runPeak, m))), 250);
    const loop = await closedLoop(50, submit, { count: jobs });
    if (loop.failed > 0) throw new Error(`/run: ${loop.failed} failed (${loop.firstError})`);
    await until(async () => (await health(base, h)).completed >= before + jobs, 30 * 60_000, 'the /run jobs', 200);
    row['runFinishPerSec'] = Math.round(jobs / ((performance.now() - t3) / 1000));
    clearInterval(runSampler);
    row['rssPeakRunMB'] = runPeak;
    row['rssEndGcMB'] = await rss(true);
    row['heapEndMB'] = heapMB;
    return row;
  } finally {
    for (const p of procs.reverse()) await p.kill();
    rmSync(dir, { recursive: true, force: true });
    if (kind === 'postgres') await dropSchema(schema);
  }
}

export function batchMarkdown(r: BatchRow): string {
  const f = (v: number | undefined) => (v === undefined ? '-' : String(Math.round(v)));
  return [
    '| figure | value |',
    '|---|---|',
    `| requests | ${r['jobs']} |`,
    `| add (10,000 a call) | ${f(r['addPerSec'])} requests/s |`,
    `| finalize (answer) | ${f(r['finalizeMs'])} ms |`,
    `| batch finish, finalize to end | ${f(r['batchFinishPerSec'])} jobs/s |`,
    `| same jobs through /run (c=50 submits) | ${f(r['runFinishPerSec'])} jobs/s |`,
    `| page through every result (1,000 a page) | ${f(r['pageAllMs'])} ms |`,
    `| control-plane RSS: start / after adds / batch peak / after the batch / /run peak / end | ${f(r['rssStartMB'])} / ${f(r['rssAfterAddMB'])} / ${f(r['rssPeakBatchMB'])} / ${f(r['rssAfterBatchMB'])} / ${f(r['rssPeakRunMB'])} / ${f(r['rssEndGcMB'])} MB |`,
    `| RSS growth, batch peak - start | ${f(r['rssGrowthMB'])} MB |`,
    `| V8 heap in use after a GC: start / after adds / after the batch / end | ${f(r['heapStartMB'])} / ${f(r['heapAfterAddMB'])} / ${f(r['heapAfterBatchMB'])} / ${f(r['heapEndMB'])} MB |`,
  ].join('\n');
}
