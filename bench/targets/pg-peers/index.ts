/**
 * The PostgreSQL peers a team with PostgreSQL and no Redis would pick: pg-boss and graphile-worker, each behind the
 * same HTTP front as the BullMQ target (./front-http.ts), in a schema of its own on the server Berth's PostgreSQL
 * rows use (dropped on stop). Their backends' CPU time counts like Berth's (`dbCpuMs`, `application_name`
 * bench:<schema>).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { backendCpuMs, DATABASE_URL, dropSchema, pgUnavailable, schemaBytes } from '../../lib/pg.js';
import { BENCH_DIR, freePort, heapUsed, release, startTs, type Proc } from '../../lib/proc.js';
import { health } from '../common.js';
import type { Running, Target, Worker } from '../types.js';

interface Peer {
  name: string;
  description: string;
  front: string;
  worker: string;
}

/** A held worker that counts as connected once it says `ready` (these queues keep no list of workers). */
function readyWorker(proc: Proc): Worker {
  const ready = new Promise<void>((resolve, reject) => {
    proc.child.on('message', (m) => m === 'ready' && resolve());
    proc.child.once('exit', (code) => reject(new Error(`the worker exited (${code}):\n${proc.output().slice(-2000)}`)));
  });
  ready.catch(() => {});
  return {
    proc,
    go: async () => {
      await release(proc);
      await ready;
    },
    stop: () => proc.kill('SIGKILL'),
  };
}

async function startPeer(peer: Peer): Promise<Running> {
  const schema = `bench_${peer.name.replace(/-/g, '_')}_${randomBytes(4).toString('hex')}`;
  const port = await freePort();
  const env = { PORT: String(port), PG_SCHEMA: schema, DATABASE_URL };
  const t0 = performance.now();
  const front = startTs(join(BENCH_DIR, peer.front), env, {
    ipc: true,
    nodeArgs: ['--expose-gc', '--import', join(BENCH_DIR, 'lib/heap-probe.mjs')],
  });
  try {
    await front.waitFor(/listening/, 60_000);
  } catch (err) {
    await front.kill();
    await dropSchema(schema);
    throw err;
  }
  const readyMs = performance.now() - t0;
  const base = (ep: string) => `http://127.0.0.1:${port}/v2/${ep}`;
  const workers = new Set<Proc>();
  return {
    readyMs,
    base,
    headers: {},
    serverProcs: () => [front],
    dbCpuMs: () => backendCpuMs(`bench:${schema}`),
    heapUsed: () => heapUsed(front),
    storeBytes: () => schemaBytes(schema),
    startWorker: async () => {
      const w = startTs(join(BENCH_DIR, peer.worker), { ...env, BENCH_HOLD: '1' }, { ipc: true });
      workers.add(w);
      return readyWorker(w);
    },
    completed: async (ep) => (await health(base(ep), {})).completed,
    stop: async () => {
      await Promise.all([...workers].map((w) => w.kill()));
      await front.kill();
      await dropSchema(schema);
    },
  };
}

const PEERS: Peer[] = [
  {
    name: 'pg-boss',
    description:
      "pg-boss 10.4 (its defaults; the last line for Node 20) on the same PostgreSQL, HTTP front like BullMQ's; worker: one `work()` of batches of up to 64, woken by a NOTIFY on insert (`notifyWorker`) instead of its 0.5 s minimum poll; completions NOTIFYed by a trigger",
    front: 'targets/pg-peers/boss-front.ts',
    worker: 'targets/pg-peers/boss-worker.ts',
  },
  {
    name: 'graphile-worker',
    description:
      "graphile-worker 0.17 (the last line for Node 20) on the same PostgreSQL, HTTP front like BullMQ's; worker: concurrency 64, pool 20, batching on (local queue 65, completeJobBatchDelay 0); the task writes its output to a table and NOTIFYs the front in one statement",
    front: 'targets/pg-peers/gw-front.ts',
    worker: 'targets/pg-peers/gw-worker.ts',
  },
];

export const PG_PEER_TARGETS: Target[] = PEERS.map((peer) => ({
  name: peer.name,
  description: peer.description,
  workloads: ['runsync', 'run', 'status', 'fill'],
  // The full preset's 100,000-job fill took pg-boss 679 s of its round (2026-11-29): its fill and drain figures are
  // per job, so 20,000 jobs measure them and keep the full preset one run (issue #40).
  maxFill: 20_000,
  unavailable: pgUnavailable,
  start: () => startPeer(peer),
}));
