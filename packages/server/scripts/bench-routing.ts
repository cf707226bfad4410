// Cost of finding a request's route (issue #37), before and after the one route table, in one run:
//   before: the matching of http/api.ts on main 38b611d, copied below (the file, blob and pull routes' prefix
//           checks and path splits, /ping, the playground's paths, the global routes, then the split path's shape,
//           the OpenAI routes and the queue table), as every request went through it;
//   after:  the one matcher (src/http/router.ts) loaded with the route table (src/http/route-table.ts), and the
//           pick of the method's route that api.ts does.
// Both only decide which route answers (no credential, no handler). Rounds are interleaved; the median is printed.
//
// Run: node --import tsx packages/server/scripts/bench-routing.ts [--iterations 200000] [--rounds 7]
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { ROUTES } from '../src/http/route-table.js';
import type { ApiRoute } from '../src/http/route-types.js';
import { Router } from '../src/http/router.js';

const { values } = parseArgs({
  options: { iterations: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '7' } },
});
const ITERATIONS = Number(values.iterations);
const ROUNDS = Number(values.rounds);
const JOB = '0b6a3c1e-5f0c-4c1e-9a3e-8d2f1c0b7a66-u1';

/** [method, path]: every route family of the API, and two misses. */
const REQUESTS: readonly (readonly [string, string])[] = [
  ['GET', '/ping'],
  ['POST', '/v2/echo/run'],
  ['POST', '/v2/echo/runsync'],
  ['GET', `/v2/echo/status/${JOB}`],
  ['POST', `/v2/echo/status-sync/${JOB}`],
  ['GET', `/v2/echo/stream/${JOB}`],
  ['POST', `/v2/echo/cancel/${JOB}`],
  ['POST', `/v2/echo/retry/${JOB}`],
  ['POST', '/v2/echo/purge-queue'],
  ['GET', '/v2/echo/health'],
  ['GET', `/v2/echo/webhooks/${JOB}`],
  ['GET', `/v2/echo/logs/${JOB}`],
  ['GET', '/v2/echo/jobs'],
  ['GET', '/v2/echo/requests'],
  ['POST', `/v2/echo/token/${JOB}`],
  ['GET', '/v2/echo/scaling'],
  ['GET', '/v2/echo/monitor'],
  ['POST', '/v2/tiny-draw/estimate'],
  ['POST', '/v2/echo/openai/v1/chat/completions'],
  ['POST', '/v2/echo/openai/v1/completions'],
  ['GET', '/v2/echo/openai/v1/models'],
  ['GET', '/metrics'],
  ['GET', '/openapi.json'],
  ['GET', '/v2/_berth/catalog'],
  ['GET', '/'],
  ['GET', '/docs'],
  ['GET', '/playground/app.js'],
  ['GET', '/files/0b6a3c1e.png'],
  ['PUT', `/v2/_worker/files/${JOB}`],
  ['GET', `/v2/_worker/jobs/${JOB}/input`],
  ['POST', `/v2/_worker/jobs/${JOB}/output`],
  ['GET', '/v2/echo/job-take/worker-1'],
  ['GET', '/v2/echo/job-take-batch/worker-1'],
  ['GET', '/v2/echo/job-stop/worker-1'],
  ['GET', '/v2/echo/ping/worker-1'],
  ['POST', `/v2/echo/job-done/worker-1/${JOB}`],
  ['POST', `/v2/echo/job-stream/worker-1/${JOB}`],
  ['GET', '/v2/echo/nope'],
  ['GET', '/nope'],
];

// ---- before: the matching of api.ts (and its file, blob, pull and playground hooks) on main 38b611d ----
const QUEUE: Record<string, { job: boolean; only?: 'model' }> = {
  run: { job: false },
  runsync: { job: false },
  status: { job: true },
  'status-sync': { job: true },
  stream: { job: true },
  cancel: { job: true },
  retry: { job: true },
  'purge-queue': { job: false },
  health: { job: false },
  webhooks: { job: true },
  logs: { job: true },
  jobs: { job: false },
  requests: { job: false },
  token: { job: true },
  scaling: { job: false },
  monitor: { job: false },
  estimate: { job: false, only: 'model' },
};
const OPENAI: Record<string, true> = { 'v1/chat/completions': true, 'v1/completions': true, 'v1/models': true };
const PULL_OPS: Record<string, { method: string; job: boolean }> = {
  'job-take': { method: 'GET', job: false },
  'job-take-batch': { method: 'GET', job: false },
  'job-stop': { method: 'GET', job: false },
  ping: { method: 'GET', job: false },
  'job-done': { method: 'POST', job: true },
  'job-stream': { method: 'POST', job: true },
};
const PREFLIGHT = /^\/v2\/[a-z0-9][a-z0-9-]{0,62}\/(status|status-sync|stream|logs|cancel)\/[^/]+$/;
const lookup = <T extends object>(t: T, k: string) => (Object.hasOwn(t, k) ? t[k as keyof T] : undefined);
const files = (path: string) =>
  path.startsWith('/v2/_worker/files/') ? 'upload' : path.startsWith('/files/') ? 'download' : undefined;
function blobs(path: string): string | undefined {
  if (!path.startsWith('/v2/_worker/jobs/')) return undefined;
  const rest = path.slice('/v2/_worker/jobs/'.length);
  const slash = rest.lastIndexOf('/');
  const what = rest.slice(slash + 1);
  return slash <= 0 || (what !== 'input' && what !== 'output') ? '404' : `blob ${what}`;
}
function pull(path: string): string | undefined {
  const parts = path.split('/');
  const op = parts[1] === 'v2' && parts[0] === '' ? parts[3] : undefined;
  return op === undefined || !Object.hasOwn(PULL_OPS, op) ? undefined : `pull ${op}`;
}
function playground(method: string, path: string): string | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  if (path === '/' || path === '/docs' || path.startsWith('/playground/')) return 'page';
  return undefined;
}
function before(method: string, path: string): string {
  const parts = path.split('/');
  const openai = parts[1] === 'v2' && parts[3] === 'openai' && parts.length > 4;
  if (path === '/ping') return 'ping';
  const own = files(path) ?? blobs(path) ?? pull(path);
  if (own) return own;
  const page = method === 'GET' || method === 'HEAD' ? playground(method, path) : undefined;
  if (page) return page;
  if (method === 'OPTIONS' && PREFLIGHT.test(path)) return 'preflight';
  if (path === '/metrics' || path === '/openapi.json' || path === '/v2/_berth/catalog') return path;
  if (parts[0] !== '' || parts[1] !== 'v2' || parts.length < 4 || (parts.length > 5 && !openai)) return '404';
  if (openai) return lookup(OPENAI, parts.slice(4).join('/')) ? `openai ${parts.slice(4).join('/')}` : '404';
  const route = lookup(QUEUE, parts[3]!);
  const jobId = parts[4];
  if (!route || route.job !== (jobId !== undefined) || jobId === '') return '404 after key';
  return parts[3]!;
}

// ---- after: the one matcher with the route table ----
const router = new Router<ApiRoute>();
for (const r of ROUTES) router.add(r.methods, r.path, r);
function after(method: string, path: string): ApiRoute | undefined {
  const found = router.match(path);
  const routes = found?.routes;
  return routes && (routes.byMethod.get(method) ?? routes.any ?? routes.first);
}

let sink = 0;
function nsPerMatch(fn: (method: string, path: string) => unknown, requests = REQUESTS): number {
  const n = requests.length;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) {
    const [method, path] = requests[i % n]!;
    if (fn(method, path) !== undefined) sink++;
  }
  return Number(process.hrtime.bigint() - t0) / ITERATIONS;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const QUEUE_ONLY = REQUESTS.filter(([, p]) => /^\/v2\/(echo|tiny-draw)\/(?!job-|ping\/|openai)/.test(p));

console.log('route picked, before -> after:');
for (const [m, p] of REQUESTS) console.log(`  ${m} ${p}: ${before(m, p)} -> ${after(m, p)?.path ?? 'none (404)'}`);
for (let i = 0; i < 3; i++) nsPerMatch(before), nsPerMatch(after); // warm up
const results = {
  all: { before: [] as number[], after: [] as number[] },
  queue: { before: [] as number[], after: [] as number[] },
};
for (let r = 0; r < ROUNDS; r++) {
  results.all.before.push(nsPerMatch(before));
  results.all.after.push(nsPerMatch(after));
  results.queue.before.push(nsPerMatch(before, QUEUE_ONLY));
  results.queue.after.push(nsPerMatch(after, QUEUE_ONLY));
}
console.log(
  `\n${ITERATIONS} matches per round, ${ROUNDS} rounds interleaved, median; load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
for (const [name, r] of Object.entries(results)) {
  const b = median(r.before);
  const a = median(r.after);
  const what = name === 'all' ? `all ${REQUESTS.length} requests` : `the ${QUEUE_ONLY.length} queue-route requests`;
  console.log(
    `${what}: before ${b.toFixed(0)} ns/match, after ${a.toFixed(0)} ns/match, after/before ${(a / b).toFixed(2)}`,
  );
}
if (sink === 0) console.log('(nothing matched)');
