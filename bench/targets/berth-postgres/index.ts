/**
 * Berth on PostgreSQL (`berth serve --store postgres`): one replica, and three replicas on one schema behind a TCP
 * round-robin balancer (clients spread over the three; the worker sits on one, so two thirds of the jobs cross
 * replicas through LISTEN/NOTIFY). Needs a PostgreSQL server: BENCH_DATABASE_URL, default
 * postgres://root@127.0.0.1:5432/test. Each start uses a new schema, dropped on stop.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { backendCpuMs, DATABASE_URL, dropSchema, schemaBytes } from '../../lib/pg.js';
import { BENCH_DIR, startTs, release, until } from '../../lib/proc.js';
import { health } from '../common.js';
import { startBerth } from '../berth/index.js';
import type { Running, Target, Workload } from '../types.js';
import { roundRobin } from './proxy.js';

const ALL: Workload[] = ['runsync', 'run', 'status', 'fill', 'stream', 'big'];
const TOKEN = 'berthw_bench_token';

/** Another checkout's `berth serve` and worker (`BENCH_BERTH_BASELINE`), or this one's. */
interface Build {
  bin?: string;
  benchDir?: string;
}

export async function startSet(replicas: number, dir: string, build: Build = {}): Promise<Running> {
  const schema = `berth_bench_${randomBytes(5).toString('hex')}`;
  const flavour = {
    name: 'pg',
    description: '',
    args: () => ['--store', 'postgres', '--database-url', DATABASE_URL, '--database-schema', schema],
    ...build,
  };
  const t0 = performance.now();
  const first = await startBerth(flavour, join(dir, 'r0')); // migrates the schema
  const rest = await Promise.all(
    Array.from({ length: replicas - 1 }, (_, i) => startBerth(flavour, join(dir, `r${i + 1}`))),
  );
  const all = [first, ...rest];
  const readyMs = performance.now() - t0;
  const drop = () => dropSchema(schema);
  // The backends of the replicas' pools and listening connections (application_name berth:<schema>).
  const dbCpuMs = () => backendCpuMs(`berth:${schema}`);
  if (replicas === 1)
    return {
      ...first,
      dbCpuMs,
      storeBytes: () => schemaBytes(schema),
      stop: async () => {
        await first.stop();
        await drop();
      },
    };
  const ports = all.map((r) => Number(new URL(r.base('echo')).port));
  const lb = await roundRobin(ports);
  // The stream reader goes straight to a replica other than its worker's: every chunk crosses replicas.
  let streamReplica: number | undefined;
  const base = (ep: string) =>
    ep === 'stream' && streamReplica !== undefined
      ? all[(streamReplica + 1) % all.length]!.base(ep)
      : `${lb.url}/v2/${ep}`;
  const workersOnAll = async (ep: string) =>
    (await Promise.all(all.map((r) => health(r.base(ep), r.headers)))).reduce((s, h) => s + h.workers, 0);
  let placed = 0;
  const extra: { kill(s?: NodeJS.Signals): Promise<void> }[] = [];
  return {
    readyMs,
    base,
    dbCpuMs,
    headers: first.headers,
    serverProcs: () => all.flatMap((r) => r.serverProcs()),
    heapUsed: async () => (await Promise.all(all.map((r) => r.heapUsed()))).reduce((s, v) => s + v, 0),
    storeBytes: () => schemaBytes(schema),
    startWorker: async (ep) => {
      // Workers go to the replicas in turn (the first one to replica 0): submits reach them across replicas.
      const at = placed++ % all.length;
      if (ep === 'stream') streamReplica = at;
      const url = new URL(all[at]!.base(ep)).origin;
      const proc = startTs(
        join(build.benchDir ?? BENCH_DIR, 'targets/berth/worker.ts'),
        { BERTH_URL: url, BERTH_ENDPOINT_ID: ep, BERTH_WORKER_TOKEN: TOKEN, BERTH_LOG_LEVEL: 'error', BENCH_HOLD: '1' },
        { ipc: true },
      );
      extra.push(proc);
      return {
        proc,
        go: async () => {
          const before = await workersOnAll(ep);
          await release(proc);
          await until(async () => (await workersOnAll(ep)) > before, 20_000, `a worker on ${url}`, 5);
        },
        stop: () => proc.kill('SIGKILL'),
      };
    },
    completed: async (ep) => (await health(first.base(ep), first.headers)).completed,
    stop: async () => {
      await Promise.all(extra.map((p) => p.kill('SIGKILL')));
      await lb.close();
      await Promise.all(all.map((r) => r.stop()));
      await drop();
    },
  };
}

const SETS: Target[] = [
  {
    name: 'berth-postgres',
    description: '`berth serve --store postgres` (PostgreSQL 15, local, synchronous_commit on)',
    workloads: ALL,
    start: (d) => startSet(1, d),
  },
  {
    name: 'berth-postgres-x3',
    description:
      '3 `berth serve --store postgres` replicas on one schema behind a TCP round-robin balancer; workers on the replicas in turn (the first on replica 0); the SSE reader on another replica than the stream worker',
    workloads: ALL,
    start: (d) => startSet(3, d),
  },
];

/** With BENCH_BERTH_BASELINE (see ../berth/index.ts): a `<name>@base` row after each, from that checkout. */
const baseline = process.env['BENCH_BERTH_BASELINE'];
export const POSTGRES_TARGETS: Target[] = SETS.flatMap((t, i) => [
  t,
  ...(baseline
    ? [
        {
          ...t,
          name: `${t.name}@base`,
          description: `${t.description}, built from ${baseline}`,
          start: (d: string) =>
            startSet(i === 0 ? 1 : 3, d, {
              bin: join(baseline, 'packages/cli/dist/bin.js'),
              benchDir: join(baseline, 'bench'),
            }),
        },
      ]
    : []),
]);
