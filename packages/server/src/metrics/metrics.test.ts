import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MemoryKeyStore } from '../keys/key-store.js';
import { createApiKey } from '../keys/create-key.js';
import { WorkerRegistry } from '../workers/worker-registry.js';
import { API_KEY, call, listening, ScriptedWorker, until, untilStatus } from '../testing.test-helpers.js';
import { Histogram, TIME_BUCKETS_MS } from './histogram.js';
import { Metrics } from './metrics.js';
import { parseExposition, sampleValue } from './metrics-exposition.test-helpers.js';
import { bucketQuantile } from './quantile.js';

const DOC = readFileSync(new URL('../../../../docs/observability.md', import.meta.url), 'utf8');
const DASHBOARD = new URL('../../../../docs/grafana/berth-dashboard.json', import.meta.url);
const scrape = async (url: string, key = API_KEY) =>
  parseExposition(await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${key}` } })).text());

const source = (replicaId?: string) => ({
  endpoints: () => ['echo'],
  counts: async () => ({ completed: 3, failed: 1, inProgress: 0, inQueue: 2, retried: 0 }),
  registry: new WorkerRegistry(),
  heartbeatMs: 5000,
  replicaId,
});

describe('histogram and quantiles', () => {
  it('counts each value once in its bucket and renders cumulative buckets, sum and count in seconds', () => {
    const h = new Histogram(TIME_BUCKETS_MS, 1000);
    for (const v of [1, 5, 6, 4_000, 2_000_000]) h.observe(v);
    h.observe(Number.NaN);
    h.observe(-1);
    const lines = h.lines('x_seconds', 'endpoint="a"');
    expect(lines).toContain('x_seconds_bucket{endpoint="a",le="0.005"} 2');
    expect(lines).toContain('x_seconds_bucket{endpoint="a",le="0.01"} 3');
    expect(lines).toContain('x_seconds_bucket{endpoint="a",le="5"} 4');
    expect(lines).toContain('x_seconds_bucket{endpoint="a",le="900"} 4');
    expect(lines).toContain('x_seconds_bucket{endpoint="a",le="+Inf"} 5');
    expect(lines).toContain('x_seconds_count{endpoint="a"} 5');
    expect(lines.find((l) => l.startsWith('x_seconds_sum'))).toBe('x_seconds_sum{endpoint="a"} 2004.012');
  });

  it('estimates quantiles as histogram_quantile does: linear in the bucket, the top bound past it', () => {
    const bounds = [10, 20, 40];
    expect(bucketQuantile(0.5, bounds, [0, 0, 0, 0])).toBeNull();
    expect(bucketQuantile(0.5, bounds, [2, 2, 0, 0])).toBe(10); // rank 2 ends the first bucket
    expect(bucketQuantile(0.75, bounds, [2, 2, 0, 0])).toBe(15);
    expect(bucketQuantile(0.95, bounds, [0, 0, 1, 9])).toBe(40); // in +Inf: the highest finite bound
    expect(bucketQuantile(0.25, bounds, [4, 0, 0, 0])).toBe(2.5);
  });
});

describe('the registry behind /metrics', () => {
  it('labels per-replica families with the replica id and leaves the shared ones alone', async () => {
    const m = new Metrics(source('replica-a'));
    try {
      m.coldStart('echo');
      const { samples } = parseExposition(await m.render());
      expect(sampleValue(samples, 'berth_worker_cold_starts_total', { replica: 'replica-a', endpoint: 'echo' })).toBe(
        1,
      );
      expect(sampleValue(samples, 'berth_jobs_completed_total', { endpoint: 'echo' })).toBe(3); // stored: one view
      expect(sampleValue(samples, 'berth_queue_depth', { endpoint: 'echo' })).toBe(2);
      expect(sampleValue(samples, 'process_resident_memory_bytes', { replica: 'replica-a' })).toBeGreaterThan(1e6);
      for (const s of samples.filter((x) => x.name.startsWith('berth_workers')))
        expect(s.labels['replica']).toBeUndefined();
    } finally {
      m.stop();
    }
  });

  it('every family /metrics emits is documented in docs/observability.md with its type', async () => {
    const m = new Metrics(source());
    try {
      const { types } = parseExposition(await m.render());
      expect(types.size).toBe(m.registry.names().length);
      const rows = DOC.split('\n').filter((l) => l.startsWith('| `'));
      for (const [name, type] of types) {
        const row = rows.find((l) => l.split('|')[1]!.includes(`\`${name}\``));
        expect(row, `${name} has no row in docs/observability.md`).toBeDefined();
        expect(row!.split('|')[2]!.trim(), `${name}'s type in docs/observability.md`).toBe(type);
      }
    } finally {
      m.stop();
    }
  });
});

describe('the Grafana dashboard (docs/grafana/berth-dashboard.json)', () => {
  it('queries only families /metrics has, and every job, worker and HTTP family is on it', () => {
    const dash = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { targets?: { expr: string }[] }[] };
    const exprs = dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(20);
    const used = new Set(
      exprs.flatMap((e) => [...e.matchAll(/\b((?:berth|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!)),
    );
    const m = new Metrics(source());
    try {
      const names = new Set(m.registry.names());
      const family = (n: string) => (names.has(n) ? n : n.replace(/_(bucket|sum|count)$/, ''));
      for (const n of used) expect(names.has(family(n)), `${n} is not a /metrics family`).toBe(true);
      const shown = new Set([...used].map(family));
      for (const n of names)
        if (n.startsWith('berth_')) expect(shown.has(n), `${n} is on no panel of the dashboard`).toBe(true);
    } finally {
      m.stop();
    }
  });
});

describe('/metrics of a running server (real socket, scripted worker)', () => {
  it('process, event-loop and HTTP figures; the route label is the route family, never the path', async () => {
    await using s = await listening();
    for (let i = 0; i < 3; i++)
      await fetch(`${s.url}/v2/echo/status/job-${i}-${Math.random()}`, {
        headers: { authorization: `Bearer ${API_KEY}` },
      });
    await fetch(`${s.url}/v2/echo/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: '{"input":{}}',
    });
    await fetch(`${s.url}/nowhere/${Math.random()}`);
    const { samples, types } = await scrape(s.url);
    expect(sampleValue(samples, 'berth_http_requests_total', { route: 'status', code: '404' })).toBe(3);
    expect(sampleValue(samples, 'berth_http_requests_total', { route: 'run', code: '200' })).toBe(1);
    expect(sampleValue(samples, 'berth_http_requests_total', { route: 'other', code: '404' })).toBe(1);
    expect(sampleValue(samples, 'berth_http_request_duration_seconds_count', { route: 'status' })).toBe(3);
    expect(sampleValue(samples, 'berth_http_request_duration_seconds_bucket', { route: 'status', le: '+Inf' })).toBe(3);
    const routes = new Set(samples.filter((x) => x.name.startsWith('berth_http_')).map((x) => x.labels['route']));
    expect([...routes].sort()).toEqual(['other', 'run', 'status']);
    expect(types.get('berth_http_request_duration_seconds')).toBe('histogram');
    expect(sampleValue(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(sampleValue(samples, 'process_resident_memory_bytes')).toBeGreaterThan(10e6);
    expect(sampleValue(samples, 'nodejs_heap_size_used_bytes')).toBeLessThanOrEqual(
      sampleValue(samples, 'nodejs_heap_size_total_bytes')!,
    );
    expect(sampleValue(samples, 'process_open_fds')).toBeGreaterThan(3);
    expect(sampleValue(samples, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
    expect(samples.some((x) => x.name === 'nodejs_active_resources' && x.labels['type'] === 'TCPServerWrap')).toBe(
      true,
    );
    expect(sampleValue(samples, 'process_start_time_seconds')).toBeLessThanOrEqual(Date.now() / 1000);
  });

  it('a key limited to some endpoints sees neither process nor HTTP figures', async () => {
    const keyStore = new MemoryKeyStore();
    await using s = await listening({ keyStore });
    const scoped = (await createApiKey(keyStore, { endpoints: ['echo'] })).secret;
    const { samples } = await scrape(s.url, scoped);
    expect(samples.filter((x) => !x.name.startsWith('berth_') || x.name.startsWith('berth_http_'))).toEqual([]);
    expect(sampleValue(samples, 'berth_queue_depth', { endpoint: 'echo' })).toBe(0);
  });

  it('counts a cold start when a worker connects for a job that was waiting, once per worker', async () => {
    await using s = await listening();
    const waiting = (await call(s.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body['id'] as string;
    const w = await ScriptedWorker.connect(s.url, { workerId: 'cold-1' });
    const a = await w.next('job.assign');
    expect(a.id).toBe(waiting);
    w.send({ type: 'job.complete', id: a.id, attempt: a.attempt, output: 1 });
    await untilStatus(s.server, 'echo', waiting, 'COMPLETED');
    const next = (await call(s.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body['id'] as string;
    const b = await w.next('job.assign');
    w.send({ type: 'job.complete', id: b.id, attempt: b.attempt, output: 1 });
    await untilStatus(s.server, 'echo', next, 'COMPLETED');
    // A second worker, connected before its job was queued: warm, not a cold start.
    const w2 = await ScriptedWorker.connect(s.url, { workerId: 'warm-2', concurrency: 2 });
    await w2.next('welcome');
    await call(s.server, 'POST', '/v2/echo/run', { body: { input: {} } });
    await call(s.server, 'POST', '/v2/echo/run', { body: { input: {} } });
    await until(() => w.count('job.assign') + w2.count('job.assign') === 4);
    const { samples } = await scrape(s.url);
    expect(sampleValue(samples, 'berth_worker_cold_starts_total', { endpoint: 'echo' })).toBe(1);
    await w.close();
    await w2.close();
  });
});
