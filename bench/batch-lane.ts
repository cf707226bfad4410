/**
 * `npx tsx bench/batch-lane.ts [--jobs N] [--seconds S]`: interactive /runsync latency while a batch runs, with and
 * without a batch lane (issue #38). Two fresh SQLite control planes (./batch/server.ts with BATCH_LANE), each with two echo
 * workers (concurrency 64 each): `int-1` and `lane-1`. With the lane, `lane-1` is the endpoint's lane worker (batch
 * requests only) and `int-1` takes interactive jobs only; without it, both take either (batch requests after every
 * queued /run job). In each: /runsync c=1 for S seconds idle (p50, p99), then a batch of N echo requests (default
 * 100,000; added 10,000 a call, then finalized) and /runsync c=1 from the finalize until it ends; the batch's finish
 * rate and the control plane's RSS (start, peak while the batch runs). Prints one JSON object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { closedLoop, request } from './lib/http.js';
import { BENCH_DIR, freePort, type Proc, release, sleep, startTs, until } from './lib/proc.js';
import { health } from './targets/common.js';
import { input } from './workloads/types.js';

const KEY = 'berth_lane_key';
const TOKEN = 'berthw_lane_token';
const PER_CALL = 10_000;
const MB = 1024 * 1024;

const { values } = parseArgs({ options: { jobs: { type: 'string' }, seconds: { type: 'string' } } });
const JOBS = Number(values.jobs ?? 100_000);
const SECONDS = Number(values.seconds ?? 10);

async function run(lane: boolean): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-lane-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}/v2/echo`;
  const h = { authorization: `Bearer ${KEY}` };
  const env = { BATCH_DIR: dir, BATCH_KEY: KEY, BATCH_TOKEN: TOKEN, BATCH_JOBS: String(JOBS), PORT: String(port) };
  const server = startTs(
    join(BENCH_DIR, 'batch/server.ts'),
    { ...env, BATCH_LANE: lane ? '1' : '0' },
    {
      ipc: true,
      nodeArgs: ['--expose-gc'],
    },
  );
  const procs: Proc[] = [server];
  const rss = (gc = false) =>
    new Promise<number>((resolve) => {
      const on = (a: { rssBytes?: number }) => {
        if (typeof a?.rssBytes !== 'number') return;
        server.child.off('message', on);
        resolve(Math.round(a.rssBytes / MB));
      };
      server.child.on('message', on);
      server.child.send({ rss: true, gc });
    });
  const row: Record<string, number> = { lane: lane ? 1 : 0, jobs: JOBS };
  try {
    await server.waitFor(/listening/, 60_000);
    for (const id of ['int-1', 'lane-1']) {
      const w = startTs(
        join(BENCH_DIR, 'targets/berth/worker.ts'),
        {
          BERTH_URL: `http://127.0.0.1:${port}`,
          BERTH_ENDPOINT_ID: 'echo',
          BERTH_WORKER_ID: id,
          BERTH_WORKER_TOKEN: TOKEN,
          BERTH_LOG_LEVEL: 'error',
          BENCH_HOLD: '1',
        },
        { ipc: true },
      );
      procs.push(w);
      await release(w);
    }
    await until(async () => (await health(base, h)).workers >= 2, 30_000, 'the workers', 20);
    const runsync = async (n: number): Promise<true | string> => {
      const r = await request(`${base}/runsync`, 'POST', { input: input(n) }, h);
      return r.status === 200 && r.body?.status === 'COMPLETED' ? true : `HTTP ${r.status} ${r.body?.status}`;
    };
    await closedLoop(1, runsync, { seconds: 2 }); // warm-up
    const idle = await closedLoop(1, runsync, { seconds: SECONDS });
    row['idleP50Ms'] = round(idle.p50);
    row['idleP99Ms'] = round(idle.p99);
    row['rssStartMB'] = await rss(true);

    const created = await request(`${base}/batch`, 'POST', { name: 'lane-bench' }, h);
    const id = created.body.id as string;
    const t0 = performance.now();
    for (let from = 0; from < JOBS; from += PER_CALL) {
      const body = Array.from({ length: Math.min(PER_CALL, JOBS - from) }, (_, i) => ({ input: input(from + i) }));
      const r = await request(`${base}/batch/${id}/requests`, 'POST', body, h);
      if (r.status !== 200) throw new Error(`add: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    }
    row['addPerSec'] = Math.round(JOBS / ((performance.now() - t0) / 1000));
    let peak = await rss();
    const sampler = setInterval(() => void rss().then((m) => (peak = Math.max(peak, m))), 250);
    await request(`${base}/batch/${id}/finalize`, 'POST', {}, h);
    // /runsync c=1 from the finalize until the batch ends (its summary polled every 200 ms): only while it runs.
    let summary: Record<string, number> = {};
    let done = false;
    const poll = (async () => {
      while (!done) {
        summary = (await request(`${base}/batch/${id}`, 'GET', undefined, h)).body;
        if (summary['finishedAt'] !== undefined) done = true;
        else await sleep(200);
      }
    })();
    const lat: number[] = [];
    let failed = 0;
    for (let n = 0; !done; n++) {
      const s = performance.now();
      if ((await runsync(n)) === true) lat.push(performance.now() - s);
      else failed++;
    }
    await poll;
    clearInterval(sampler);
    row['duringP50Ms'] = round(pct(lat, 50));
    row['duringP99Ms'] = round(pct(lat, 99));
    row['duringCalls'] = lat.length;
    row['duringFailed'] = failed;
    // From its finalize to its end, as the summary says (the measure above may end after the batch did).
    const runMs = (summary['finishedAt'] ?? 0) - (summary['finalizedAt'] ?? 0);
    row['batchFinishPerSec'] = runMs > 0 ? Math.round(JOBS / (runMs / 1000)) : 0;
    row['batchRunS'] = round(runMs / 1000);
    row['rssPeakMB'] = peak;
    row['rssGrowthMB'] = peak - row['rssStartMB'];
    if (summary['requestCompleted'] !== JOBS) throw new Error(`batch ended with ${JSON.stringify(summary)}`);
    return row;
  } finally {
    for (const p of procs.reverse()) await p.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (x: number) => Math.round(x * 100) / 100;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : 0;
};
const withLane = await run(true);
const withoutLane = await run(false);
console.log(JSON.stringify({ seconds: SECONDS, withLane, withoutLane }, null, 2));
