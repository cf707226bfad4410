// The volume run's control plane (../volume.ts): createServer() on a SQLite file or a PostgreSQL schema, as
// `berth serve` builds it, with two additions the bench drives over IPC: a clock it can move forward
// ({ advance: ms }, so retention comes due without waiting for it), and timings of the store's claims and a
// count of its deletes ({ stats: true } answers and resets them). The heap probe (bench/lib/heap-probe.mjs) is
// preloaded for the event-loop stall figures.
import { join } from 'node:path';
import { createServer, silentLogger, type Store } from '@berth/server';
import { PgStore } from '@berth/server/postgres';
import { SqliteStore } from '@berth/server/sqlite';
import { percentile } from '../lib/stats.js';

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

process.on('message', (m: { advance?: number; stats?: boolean }) => {
  if (typeof m !== 'object' || m === null) return;
  if (m.advance !== undefined) {
    offset += m.advance;
    process.send?.({ advanced: offset });
  } else if (m.stats) {
    const s = { claims: claims.length, claimP50: percentile(claims, 50), claimP99: percentile(claims, 99), deletes };
    claims = [];
    process.send?.(s);
  }
});
process.stdout.write('listening\n');
