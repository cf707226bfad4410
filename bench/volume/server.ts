// The volume run's control plane (../volume.ts): createServer() on a SQLite file or a PostgreSQL schema, as
// `berth serve` builds it, with three additions the bench drives over IPC: a clock it can move forward
// ({ advance: ms }, so retention comes due without waiting for it), timings of the store's claims and a
// count of its deletes ({ stats: true } answers and resets them), and the bulk of the fill ({ fill: { from,
// count } }): `POST /v2/backlog/run` through `server.handle()`, the route HTTP requests take minus the socket
// (auth, body, submit, the store's insert), 256 in flight. The heap probe (bench/lib/heap-probe.mjs) is
// preloaded for the event-loop stall figures.
import { appendFileSync } from 'node:fs';
import { type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { join } from 'node:path';
import { createServer, silentLogger, type Store } from '@berth/server';
import { PgStore } from '@berth/server/postgres';
import { SqliteStore } from '@berth/server/sqlite';
import { percentile } from '../lib/stats.js';
import { input } from '../workloads/types.js';

const kind = process.env['VOL_STORE'];
const store: Store =
  kind === 'postgres'
    ? await PgStore.open({ url: process.env['DATABASE_URL']!, schema: process.env['VOL_SCHEMA']! })
    : new SqliteStore({ file: join(process.env['VOL_DIR']!, 'berth.sqlite') });

let claims: number[] = [];
let deletes = 0;
const claim = store.claim.bind(store);
store.claim = async (...args) => {
  const t0 = performance.now();
  const job = await claim(...args);
  if (job) claims.push(performance.now() - t0);
  return job;
};
const del = store.delete.bind(store);
store.delete = async (...args) => {
  const gone = await del(...args);
  if (gone) deletes++;
  return gone;
};

const delMany = store.deleteRetained?.bind(store);
if (delMany)
  store.deleteRetained = async (jobs) => {
    const gone = await delMany(jobs);
    deletes += gone.length;
    return gone;
  };

// Diagnosis (BENCH_VOLUME_SLOW_LOG=<file>): every event-loop gap over BENCH_VOLUME_SLOW_MS (default 100 ms; a 5 ms
// interval that fired late) is appended to the file with the store operation that ran last and the slow operations
// (over 30 ms) before it: the synchronous part of the store's calls, and SQLite's COMMIT (its group commit's flush);
// and every garbage collection that took over 20 ms, with its kind.
const slowLog = process.env['BENCH_VOLUME_SLOW_LOG'];
const slowMs = Number(process.env['BENCH_VOLUME_SLOW_MS'] ?? 100);
if (slowLog) {
  const GC_KINDS: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak callbacks' };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0;
      if (e.duration > 20)
        appendFileSync(
          slowLog,
          `${new Date().toISOString()} gc ${GC_KINDS[kind] ?? kind} ${e.duration.toFixed(0)} ms, heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MB\n`,
        );
    }
  }).observe({ entryTypes: ['gc'] });
  let last = 'none';
  let recent: string[] = [];
  const timed = (name: string, fn: (...a: never[]) => unknown) =>
    function (this: unknown, ...a: never[]) {
      const t0 = performance.now();
      last = name;
      try {
        return fn.apply(this, a);
      } finally {
        const ms = performance.now() - t0;
        if (ms > 30) recent.push(`${name} ${ms.toFixed(0)} ms`);
        last = `after ${name}`;
      }
    };
  const s = store as unknown as Record<string, (...a: never[]) => unknown>;
  for (const m of ['due', 'delete', 'deleteRetained', 'insert', 'claim', 'finish', 'get'])
    if (typeof s[m] === 'function') s[m] = timed(m, s[m].bind(store));
  const tx = (store as unknown as { tx?: { flush(): void } }).tx;
  if (tx) tx.flush = timed('COMMIT', tx.flush.bind(tx)) as () => void;
  let prev = performance.now();
  setInterval(() => {
    const t = performance.now();
    const gap = t - prev - 5;
    prev = t;
    if (gap > slowMs) {
      appendFileSync(
        slowLog,
        `${new Date().toISOString()} gap ${gap.toFixed(0)} ms, last ${last}; ${recent.join(', ')}\n`,
      );
    }
    recent = [];
  }, 5).unref();
}

let offset = 0;
const server = createServer({
  store,
  clock: { now: () => Date.now() + offset },
  apiKeys: [process.env['VOL_KEY']!],
  workerTokens: [process.env['VOL_TOKEN']!],
  endpoints: ['echo', 'backlog'],
  logger: silentLogger,
  rateLimits: { enabled: false },
});
await server.listen({ port: Number(process.env['PORT']), host: '127.0.0.1' });

/** Submits `count` /run jobs to `backlog` in process; answers the first failure, if any. */
async function fill(from: number, count: number): Promise<string | undefined> {
  const headers = { authorization: `Bearer ${process.env['VOL_KEY']!}`, 'content-type': 'application/json' };
  let next = 0;
  let failed: string | undefined;
  const lane = async () => {
    while (next < count && failed === undefined) {
      const n = from + next++;
      const body = JSON.stringify({ input: input(n) });
      const r = await server.handle({
        method: 'POST',
        path: '/v2/backlog/run',
        query: new URLSearchParams(),
        headers,
        body,
      });
      if (r.status !== 200) failed = `HTTP ${r.status}: ${JSON.stringify('json' in r ? r.json : '')}`;
    }
  };
  await Promise.all(Array.from({ length: 256 }, lane));
  return failed;
}

process.on('message', (m: { advance?: number; stats?: boolean; fill?: { from: number; count: number } }) => {
  if (typeof m !== 'object' || m === null) return;
  if (m.fill) {
    const t0 = performance.now();
    void fill(m.fill.from, m.fill.count).then((error) =>
      process.send?.({ filled: m.fill!.count, seconds: (performance.now() - t0) / 1000, error }),
    );
  } else if (m.advance !== undefined) {
    offset += m.advance;
    process.send?.({ advanced: offset });
  } else if (m.stats) {
    const s = { claims: claims.length, claimP50: percentile(claims, 50), claimP99: percentile(claims, 99), deletes };
    claims = [];
    process.send?.(s);
  }
});
process.stdout.write('listening\n');
