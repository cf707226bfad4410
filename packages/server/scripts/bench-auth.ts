// Cost of authentication + key scopes + rate limiting per request (issue #4), measured in one run:
//   1. ns/op of each check in-process: plain key (BERTH_API_KEY), stored key (SQLite, berth_sk_...), the guard
//      chain (scope + rate limit), and the whole auth + guard step;
//   2. req/s of GET /status/<id> over real HTTP (keep-alive, concurrency 32), rounds interleaved:
//      limits off + plain key, limits on + plain key, limits on + stored key (base limit raised so nothing is
//      refused: this measures the bookkeeping, not throttling).
//
// Run: node --import tsx packages/server/scripts/bench-auth.ts [--requests 4000] [--rounds 5]
import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KeyChecker } from '../src/http/auth.js';
import { combineGuards } from '../src/http/guard.js';
import { ApiKeyAuth } from '../src/keys/api-key-auth.js';
import { createApiKey } from '../src/keys/create-key.js';
import { scopeGuard } from '../src/keys/scope-guard.js';
import { SqliteKeyStore } from '../src/keys/sqlite-key-store.js';
import { createRateLimitGuard } from '../src/limits/rate-limit-guard.js';
import { resolveRateLimits } from '../src/limits/rate-limit-options.js';
import { systemClock } from '../src/clock.js';
import { silentLogger } from '@berth/protocol/log';
import { createServer, type BerthServer } from '../src/server.js';
import { MemoryStore } from '../src/store/memory/memory-store.js';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '4000' }, rounds: { type: 'string', default: '5' } },
});
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);
const PLAIN = 'bench-plain-key-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'berth-bench-auth-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function nsPerOp(fn: () => unknown, n: number): Promise<number> {
  for (let i = 0; i < Math.min(n, 2000); i++) await fn(); // warm up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn();
  return Number(process.hrtime.bigint() - t0) / n;
}

// 1. In-process costs.
const keyStore = new SqliteKeyStore(join(dir, 'keys.sqlite'));
const stored = (await createApiKey(keyStore, { name: 'bench' })).secret;
const auth = new ApiKeyAuth(new KeyChecker([PLAIN], 'key'), keyStore);
const limits = resolveRateLimits({ base: { status: 1e12 } });
const guard = combineGuards(scopeGuard, createRateLimitGuard({ limits, clock: systemClock, runningWorkers: () => 2 }));
const N = 50_000;
const checks: Record<string, () => unknown> = {
  'plain key (sha256 + timingSafeEqual)': () => auth.authenticate(`Bearer ${PLAIN}`),
  'stored key (SQLite lookup by id + sha256 + timingSafeEqual)': () => auth.authenticate(`Bearer ${stored}`),
  'guard chain (scope + fixed-window rate limit)': () =>
    guard({
      principal: { keyId: 'k1', scope: { endpoints: null, readOnly: false } },
      endpointId: 'echo',
      operation: 'status',
    }),
  'auth + guard, stored key': async () =>
    guard({ principal: await auth.authenticate(`Bearer ${stored}`), endpointId: 'echo', operation: 'status' }),
};
const samples = new Map<string, number[]>(Object.keys(checks).map((k) => [k, []]));
for (let r = 0; r < 5; r++)
  for (const [name, fn] of Object.entries(checks)) samples.get(name)!.push(await nsPerOp(fn, N));
const micro = Object.fromEntries([...samples].map(([k, xs]) => [k, median(xs)]));

// 2. req/s over HTTP.
type Variant = { name: string; limits: boolean; key: string };
const variants: Variant[] = [
  { name: 'limits off, plain key', limits: false, key: PLAIN },
  { name: 'limits on, plain key', limits: true, key: PLAIN },
  { name: 'limits on, stored key', limits: true, key: stored },
];

async function measure(v: Variant): Promise<number> {
  const server: BerthServer = createServer({
    apiKeys: [PLAIN],
    keyStore,
    endpoints: ['echo'],
    logger: silentLogger,
    sweepIntervalMs: 0,
    store: new MemoryStore(),
    rateLimits: v.limits ? { base: { status: 1e12 } } : { enabled: false },
  });
  const { port } = await server.listen({ port: 0 });
  const id = (
    (await server.handle({
      method: 'POST',
      path: '/v2/echo/run',
      query: new URLSearchParams(),
      headers: { authorization: `Bearer ${PLAIN}` },
      body: '{"input":{}}',
    })) as { json: { id: string } }
  ).json.id;
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: `/v2/echo/status/${id}`,
          agent,
          headers: { authorization: `Bearer ${v.key}` },
        },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end();
    });
  let next = 0;
  const worker = async () => {
    while (next++ < REQUESTS) await one();
  };
  await Promise.all(Array.from({ length: 32 }, worker)); // warm-up round
  next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: 32 }, worker));
  const rps = REQUESTS / ((performance.now() - t0) / 1000);
  agent.destroy();
  await server.close({ drainMs: 0 });
  return rps;
}

const rps = new Map<string, number[]>(variants.map((v) => [v.name, []]));
for (let r = 0; r < ROUNDS; r++) for (const v of variants) rps.get(v.name)!.push(await measure(v));
await keyStore.close();
rmSync(dir, { recursive: true, force: true });

console.log(
  `auth + rate limits, node ${process.version}, load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(
      ' ',
    )}, median of 5 interleaved rounds of ${N} ops per micro figure, ${REQUESTS} requests x ${ROUNDS} interleaved rounds per HTTP figure`,
);
for (const [name, ns] of Object.entries(micro))
  console.log(`  ${name.padEnd(62)} ${(ns / 1000).toFixed(2).padStart(7)} us/op`);
const base = median(rps.get(variants[0]!.name)!);
for (const v of variants) {
  const xs = rps.get(v.name)!;
  const m = median(xs);
  console.log(
    `  GET /status, ${v.name.padEnd(24)} median ${m.toFixed(0).padStart(6)} req/s (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}), ${(m / base).toFixed(3)}x of limits off`,
  );
}
