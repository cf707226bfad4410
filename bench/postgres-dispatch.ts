// `npx tsx bench/postgres-dispatch.ts [--calls N] [--rounds N]`: cross-replica dispatch latency on PostgreSQL.
// Two `berth serve --store postgres` replicas A and B on one new schema, one echo worker connected to B.
// /runsync at concurrency 1 alternates between B (submit and worker on the same replica: no crossing) and A (the
// job crosses to B through NOTIFY, the result's wake-up crosses back), and, for reference, a SQLite replica with
// its own worker. Prints p50/p99 of each and the differences, measured in the same run (interleaved rounds).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { closedLoop, request } from './lib/http.js';
import { startBerth } from './targets/berth/index.js';
import { dropSchema } from './lib/pg.js';
import type { Running } from './targets/types.js';
import { input, isEcho } from './workloads/types.js';

const { values } = parseArgs({ options: { calls: { type: 'string' }, rounds: { type: 'string' } } });
const CALLS = Number(values.calls ?? 300);
const ROUNDS = Number(values.rounds ?? 3);
const URL_ = process.env['BENCH_DATABASE_URL'] ?? 'postgres://root@127.0.0.1:5432/test';
const schema = `berth_bench_${Math.random().toString(16).slice(2, 10)}`;
const dir = mkdtempSync(join(tmpdir(), 'berth-pg-dispatch-'));
const pg = {
  name: 'pg',
  description: '',
  args: () => ['--store', 'postgres', '--database-url', URL_, '--database-schema', schema],
};

async function c1(base: string, headers: Record<string, string>) {
  const r = await closedLoop(
    1,
    async (n) => {
      const res = await request(`${base}/runsync`, 'POST', { input: input(n) }, headers);
      return res.status === 200 ? isEcho(res.body, n) : `HTTP ${res.status}`;
    },
    { count: CALLS, seconds: 60 },
  );
  if (r.failed) throw new Error(`${r.failed} calls failed: ${r.firstError}`);
  return r;
}

const started: Running[] = [];
try {
  const b = await startBerth(pg, join(dir, 'b'));
  const a = await startBerth(pg, join(dir, 'a'));
  const sqlite = await startBerth({ name: 'sqlite', description: '', args: (d) => ['--data-dir', d] }, join(dir, 's'));
  started.push(a, b, sqlite);
  await (await b.startWorker('echo')).go();
  await (await sqlite.startWorker('echo')).go();
  const rows: Record<string, { p50: number[]; p99: number[] }> = {
    'sqlite (same process)': { p50: [], p99: [] },
    'pg: submit on B, worker on B': { p50: [], p99: [] },
    'pg: submit on A, worker on B': { p50: [], p99: [] },
  };
  await c1(b.base('echo'), b.headers); // warm-up
  await c1(a.base('echo'), a.headers);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, run] of [
      ['sqlite (same process)', sqlite],
      ['pg: submit on B, worker on B', b],
      ['pg: submit on A, worker on B', a],
    ] as const) {
      const res = await c1(run.base('echo'), run.headers);
      rows[name]!.p50.push(res.p50);
      rows[name]!.p99.push(res.p99);
      process.stderr.write(`round ${r + 1}/${ROUNDS} ${name}: p50 ${res.p50.toFixed(2)} ms\n`);
    }
  }
  const med = (v: number[]) => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)]!;
  const same = med(rows['pg: submit on B, worker on B']!.p50);
  const cross = med(rows['pg: submit on A, worker on B']!.p50);
  const lite = med(rows['sqlite (same process)']!.p50);
  console.log(`\n/runsync c=1, ${CALLS} calls x ${ROUNDS} interleaved rounds (median of rounds)\n`);
  console.log('| path | p50 (ms) | p99 (ms) |\n|---|---:|---:|');
  for (const [name, v] of Object.entries(rows))
    console.log(`| ${name} | ${med(v.p50).toFixed(2)} | ${med(v.p99).toFixed(2)} |`);
  console.log(
    `\ncrossing replicas adds ${(cross - same).toFixed(2)} ms at p50 (x${(cross / same).toFixed(2)}); PostgreSQL same-replica vs SQLite: x${(same / lite).toFixed(2)}`,
  );
} finally {
  await Promise.all(started.map((r) => r.stop()));
  await dropSchema(schema);
  rmSync(dir, { recursive: true, force: true });
}
