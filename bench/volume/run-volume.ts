/**
 * `npm run bench -- --volume [--volume-jobs N]`: Berth's stores with a deep table (issue #40). For SQLite and
 * PostgreSQL in turn, on a fresh store (./server.ts): queue N jobs (default 1,000,000) on an endpoint with no
 * worker (`backlog`), measuring at N/100, N/10 and N queued the /run submit rate of the last stretch, `/runsync`
 * at c=1 and c=50 on another endpoint (`echo`, one worker: its jobs share the table with the backlog), the store's
 * claim time (p50/p99, timed inside the server), the longest event-loop stall during the c=50 loop, and the store's
 * size per queued job; then drain the backlog (a worker on `backlog`); then move the server's clock past the
 * retention of every finished job and keep `/runsync` c=50 going while the deadline sweep deletes them: deletes
 * per second, the longest stall and the `/runsync` p99 meanwhile.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedLoop, request } from '../lib/http.js';
import { DATABASE_URL, dropSchema, schemaBytes } from '../lib/pg.js';
import { BENCH_DIR, freePort, type Proc, release, stallStart, stallStop, startTs, until } from '../lib/proc.js';
import { dirBytes, health } from '../targets/common.js';
import { input, isEcho } from '../workloads/types.js';

const KEY = 'berth_volume_key';
const TOKEN = 'berthw_volume_token';
const RETENTION_MS = 31 * 60_000; // past the 30 min retention of /run jobs (1 min for /runsync)

export type VolumeRow = Record<string, number>;

interface VolumeServer {
  proc: Proc;
  base(ep: string): string;
  storeBytes(): Promise<number>;
  ask<T>(m: object, key: string): Promise<T>;
  stop(): Promise<void>;
}

async function startServer(kind: 'sqlite' | 'postgres', dir: string): Promise<VolumeServer> {
  const port = await freePort();
  const schema = `bench_volume_${randomBytes(4).toString('hex')}`;
  const proc = startTs(
    join(BENCH_DIR, 'volume/server.ts'),
    {
      VOL_STORE: kind,
      VOL_DIR: dir,
      VOL_SCHEMA: schema,
      DATABASE_URL,
      VOL_KEY: KEY,
      VOL_TOKEN: TOKEN,
      PORT: String(port),
    },
    { ipc: true, nodeArgs: ['--expose-gc', '--import', join(BENCH_DIR, 'lib/heap-probe.mjs')] },
  );
  await proc.waitFor(/listening/, 60_000);
  return {
    proc,
    base: (ep) => `http://127.0.0.1:${port}/v2/${ep}`,
    storeBytes: () => (kind === 'postgres' ? schemaBytes(schema) : Promise.resolve(dirBytes(dir))),
    ask: (m, key) =>
      new Promise((resolve) => {
        const on = (a: Record<string, unknown>) => {
          if (typeof a !== 'object' || a === null || !(key in a)) return;
          proc.child.off('message', on);
          resolve(a as never);
        };
        proc.child.on('message', on);
        proc.child.send(m);
      }),
    stop: async () => {
      await proc.kill();
      if (kind === 'postgres') await dropSchema(schema);
    },
  };
}

/** /run submits over HTTP before each depth's measurements (the rest of the fill goes in process). */
const HTTP_SAMPLE = 5_000;

interface Filled {
  filled: number;
  seconds: number;
  error?: string;
}

interface Stats {
  claims: number;
  claimP50: number;
  claimP99: number;
  deletes: number;
}

function startWorker(s: VolumeServer, ep: string): Proc {
  const url = new URL(s.base(ep)).origin;
  return startTs(
    join(BENCH_DIR, 'targets/berth/worker.ts'),
    { BERTH_URL: url, BERTH_ENDPOINT_ID: ep, BERTH_WORKER_TOKEN: TOKEN, BERTH_LOG_LEVEL: 'error', BENCH_HOLD: '1' },
    { ipc: true },
  );
}

async function workerOn(s: VolumeServer, ep: string): Promise<Proc> {
  const h = { authorization: `Bearer ${KEY}` };
  const w = startWorker(s, ep);
  await release(w);
  await until(async () => (await health(s.base(ep), h)).workers > 0, 30_000, `a worker on ${ep}`, 20);
  return w;
}

/** One store: the fill with its measurements at three depths, the drain, the retention sweep. */
export async function volumeRun(kind: 'sqlite' | 'postgres', jobs: number, log: (l: string) => void) {
  const dir = mkdtempSync(join(tmpdir(), `berth-volume-${kind}-`));
  const s = await startServer(kind, dir);
  const h = { authorization: `Bearer ${KEY}` };
  const rows: VolumeRow[] = [];
  const out: VolumeRow = {};
  const workers: Proc[] = [];
  try {
    workers.push(await workerOn(s, 'echo'));
    const runsync = async (n: number) => {
      const r = await request(`${s.base('echo')}/runsync`, 'POST', { input: input(n) }, h);
      return r.status === 200 ? isEcho(r.body, n) : `HTTP ${r.status}: ${JSON.stringify(r.body)}`;
    };
    const submit = async (n: number): Promise<true | string> => {
      const r = await request(`${s.base('backlog')}/run`, 'POST', { input: input(n) }, h);
      return r.status === 200 ? true : `HTTP ${r.status}: ${JSON.stringify(r.body)}`;
    };
    const check = (what: string, r: { ok: number; failed: number; firstError?: string }) => {
      if (r.failed > 0) throw new Error(`${what}: ${r.failed} failed (${r.firstError})`);
    };
    check('warm-up', await closedLoop(50, runsync, { seconds: 2 }));
    let queued = 0;
    const levels = [...new Set([Math.round(jobs / 100), Math.round(jobs / 10), jobs])].filter((l) => l > 0);
    for (const level of levels) {
      const t0 = performance.now();
      // The bulk goes in process (server.ts: the /run route through server.handle(), 256 in flight); the last
      // stretch goes over HTTP at c=50, and its rate is the submit figure.
      const sample = Math.min(level - queued, HTTP_SAMPLE);
      const bulk = await s.ask<Filled>({ fill: { from: queued, count: level - queued - sample } }, 'filled');
      if (bulk.error) throw new Error(`fill to ${level}: ${bulk.error}`);
      queued += bulk.filled;
      const fill = await closedLoop(50, (n) => submit(queued + n), { count: sample });
      check(`fill to ${level}`, fill);
      queued = level;
      await s.ask({ stats: true }, 'claims');
      const c1 = await closedLoop(1, runsync, { count: 300 });
      check('/runsync c=1', c1);
      await stallStart(s.proc);
      const c50 = await closedLoop(50, runsync, { seconds: 4 });
      const stall = await stallStop(s.proc);
      check('/runsync c=50', c50);
      const st = await s.ask<Stats>({ stats: true }, 'claims');
      const row: VolumeRow = {
        queued,
        submit_rps: fill.perSecond,
        fill_in_process_rps: bulk.filled > 0 ? bulk.filled / bulk.seconds : NaN,
        runsync_c1_p50_ms: c1.p50,
        runsync_c1_p99_ms: c1.p99,
        runsync_c50_rps: c50.perSecond,
        runsync_c50_p99_ms: c50.p99,
        claim_p50_ms: st.claimP50,
        claim_p99_ms: st.claimP99,
        stall_ms: stall,
        store_b_per_job: (await s.storeBytes()) / queued,
        load1: loadavg()[0]!,
      };
      rows.push(row);
      log(`${kind} ${JSON.stringify(row)} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
    // The drain: one worker on the backlog.
    const t0 = performance.now();
    workers.push(await workerOn(s, 'backlog'));
    await until(async () => (await health(s.base('backlog'), h)).completed >= queued, 3_600_000, 'the drain', 1000);
    const st = await s.ask<Stats>({ stats: true }, 'claims');
    out['drain_jobs_per_s'] = queued / ((performance.now() - t0) / 1000);
    out['drain_claim_p50_ms'] = st.claimP50;
    out['drain_claim_p99_ms'] = st.claimP99;
    out['finished_store_b_per_job'] = (await s.storeBytes()) / queued;
    out['drain_load1'] = loadavg()[0]!;
    log(`${kind} drain ${JSON.stringify(out)}`);
    // Retention: the clock moves past every finished job's retention; traffic runs while the sweep deletes them.
    const d0 = st.deletes;
    await s.ask({ advance: RETENTION_MS }, 'advanced');
    await stallStart(s.proc);
    const t1 = performance.now();
    const p99s: number[] = [];
    let deleted = 0;
    const budget = 300_000; // ms: the sweep's pace (deletes per second) is the figure, not its end
    while (deleted < queued && performance.now() - t1 < budget) {
      const r = await closedLoop(50, runsync, { seconds: 5 });
      check('/runsync c=50 during the sweep', r);
      p99s.push(r.p99);
      deleted = (await s.ask<Stats>({ stats: true }, 'claims')).deletes - d0;
    }
    const secs = (performance.now() - t1) / 1000;
    out['sweep_stall_ms'] = await stallStop(s.proc);
    out['sweep_deleted'] = deleted;
    out['sweep_deletes_per_s'] = deleted / secs;
    out['sweep_runsync_c50_p99_ms'] = Math.max(...p99s);
    out['sweep_s'] = secs;
    out['sweep_load1'] = loadavg()[0]!;
    log(`${kind} sweep ${JSON.stringify(out)}`);
  } finally {
    await Promise.all(workers.map((w) => w.kill()));
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return { store: kind, jobs, rows, ...out };
}

type VolumeResult = Awaited<ReturnType<typeof volumeRun>>;

const COLUMNS: [key: string, label: string][] = [
  ['submit_rps', '/run submits over HTTP, c=50 (req/s, the last 5,000 before)'],
  ['fill_in_process_rps', '/run through server.handle(), 256 in flight (jobs/s, the rest of the fill)'],
  ['runsync_c1_p50_ms', '/runsync c=1 p50 (ms)'],
  ['runsync_c1_p99_ms', '/runsync c=1 p99 (ms)'],
  ['runsync_c50_rps', '/runsync c=50 (req/s)'],
  ['runsync_c50_p99_ms', '/runsync c=50 p99 (ms)'],
  ['claim_p50_ms', 'claim p50 (ms)'],
  ['claim_p99_ms', 'claim p99 (ms)'],
  ['stall_ms', 'longest stall during c=50 (ms)'],
  ['store_b_per_job', 'store per queued job (B)'],
];

const fmt = (x: number | undefined) =>
  x === undefined || !Number.isFinite(x) ? 'n/a' : x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toPrecision(3);

/** The curve of each store as a markdown table (one column per depth), then the drain and the sweep. */
export function volumeMarkdown(results: VolumeResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(
      `**${r.store}**, ${r.jobs.toLocaleString('en-US')} jobs`,
      '',
      `| figure | ${r.rows.map((x) => `${fmt(x['queued'])} queued`).join(' | ')} | last ÷ first |`,
      `|---|${r.rows.map(() => '---:').join('|')}|---:|`,
    );
    for (const [k, label] of COLUMNS) {
      const first = r.rows[0]?.[k];
      const last = r.rows.at(-1)?.[k];
      lines.push(
        `| ${label} | ${r.rows.map((x) => fmt(x[k])).join(' | ')} | ${fmt(first && last !== undefined ? last / first : NaN)} |`,
      );
    }
    const o = r as unknown as Record<string, number>;
    lines.push(
      '',
      `Drain: ${fmt(o['drain_jobs_per_s'])} jobs/s, claim p50 ${fmt(o['drain_claim_p50_ms'])} ms, p99 ${fmt(o['drain_claim_p99_ms'])} ms; ` +
        `store per finished job ${fmt(o['finished_store_b_per_job'])} B. Retention sweep (clock moved ${RETENTION_MS / 60_000} min) under /runsync c=50: ` +
        `${fmt(o['sweep_deleted'])} deleted in ${fmt(o['sweep_s'])} s (${fmt(o['sweep_deletes_per_s'])}/s), longest stall ${fmt(o['sweep_stall_ms'])} ms, ` +
        `/runsync c=50 p99 up to ${fmt(o['sweep_runsync_c50_p99_ms'])} ms.`,
      '',
    );
  }
  return lines.join('\n');
}
