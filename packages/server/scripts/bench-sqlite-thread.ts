// The SQLite store alone, in the event loop (`GroupCommit`) and on its thread (`ThreadCommit`), interleaved A B A B:
// C clients each loop insert -> claim -> finish (the store calls of one /runsync job, no HTTP, no worker), and
// the figures are jobs/s, event-loop busy time per job (what the thread takes off the loop) and CPU per job (all
// threads of this process).
//
// Run after `npm run build`:  node --import tsx packages/server/scripts/bench-sqlite-thread.ts [--jobs 20000] [--rounds 3] [--concurrency 50]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { SqliteStore } from '../dist/store/sqlite/sqlite-store.js';
import type { JobRecord } from '../dist/store/types.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '50' },
  },
});
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const C = Number(values.concurrency);
const dir = mkdtempSync(join(tmpdir(), 'berth-bench-thread-'));
const RETENTION = { sync: 60_000, async: 3_600_000 };
let n = 0;

function job(id: string): JobRecord {
  const now = Date.now();
  return {
    id,
    endpointId: 'ep',
    status: 'IN_QUEUE',
    input: { prompt: 'hello', n: 1 },
    executionTimeout: 600_000,
    lowPriority: false,
    sync: true,
    attempt: 0,
    retries: 0,
    createdAt: now,
    queuedAt: now,
    expiresAt: now + 3_600_000,
  };
}

async function run(durability: 'normal' | 'full', thread: boolean) {
  const store = new SqliteStore({ file: join(dir, `${++n}.sqlite`), durability, thread });
  await store.counts('ep'); // the thread is up
  let next = 0;
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const commits0 = store.commits;
  await Promise.all(
    Array.from({ length: C }, async (_, c) => {
      while (next < JOBS) {
        const id = `j${next++}-${c}`;
        await store.insert(job(id));
        const claimed = await store.claim('ep', `w${c}`, Date.now());
        if (!claimed) throw new Error('nothing to claim');
        await store.finish(
          claimed.id,
          claimed.attempt,
          { status: 'COMPLETED', output: { ok: true } },
          Date.now(),
          RETENTION,
        );
      }
    }),
  );
  const ms = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  const cpu = process.cpuUsage(cpu0);
  const commits = store.commits - commits0;
  await store.close();
  return {
    jobsPerS: (JOBS / ms) * 1000,
    loopMsPerJob: elu.active / JOBS,
    cpuMsPerJob: (cpu.user + cpu.system) / 1000 / JOBS,
    jobsPerCommit: JOBS / commits,
  };
}

const fmt = (x: number, d = 3) => x.toFixed(d);
for (const durability of ['normal', 'full'] as const) {
  const rows: Record<string, ReturnType<typeof run> extends Promise<infer R> ? R[] : never> = { loop: [], thread: [] };
  for (let r = 0; r < ROUNDS; r++)
    for (const thread of [false, true]) rows[thread ? 'thread' : 'loop']!.push(await run(durability, thread));
  for (const [mode, rs] of Object.entries(rows)) {
    const med = (k: keyof (typeof rs)[number]) => rs.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(rs.length / 2)]!;
    console.log(
      `${durability} ${mode}: ${fmt(med('jobsPerS'), 0)} jobs/s, loop ${fmt(med('loopMsPerJob'))} ms/job, cpu ${fmt(med('cpuMsPerJob'))} ms/job, ${fmt(med('jobsPerCommit'), 1)} jobs/commit (median of ${rs.length})`,
    );
  }
}
rmSync(dir, { recursive: true, force: true });
