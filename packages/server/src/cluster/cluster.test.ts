import { afterEach, describe, expect, it } from 'vitest';
import type { BerthServer } from '../server.js';
import { PgStore } from '../store/postgres/pg-store.js';
import { dropSchema, PG_TEST_URL, pgUnavailable, testSchema } from '../store/postgres/pg-test-db.test-helpers.js';
import { API_KEY, call, ScriptedWorker, testServer, until } from '../testing.test-helpers.js';
import { PgClusterBus } from './pg-cluster-bus.js';

// Two control planes in one process, each with its own PgStore (own pool, own LISTEN connection) on one schema:
// the same code path as two `berth serve` replicas, minus the process boundary (tested in the CLI's replicas tests).
const skip = await pgUnavailable();

interface Replica {
  server: BerthServer;
  url: string;
  bus: PgClusterBus;
}

describe.skipIf(skip !== undefined)(`replicas on one PostgreSQL schema${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  async function replicas(n: number): Promise<Replica[]> {
    const schema = testSchema();
    cleanup.push(() => dropSchema(schema));
    const out: Replica[] = [];
    for (let i = 0; i < n; i++) {
      const store = await PgStore.open({ url: PG_TEST_URL, schema, poolSize: 4 });
      const bus = new PgClusterBus(store);
      const server = testServer({ store, cluster: bus });
      const { url } = await server.listen({ port: 0 });
      cleanup.push(() => server.close({ drainMs: 0 }));
      out.push({ server, url, bus });
    }
    // Each replica announces itself when it starts listening: wait until the earlier ones heard the later ones,
    // so none of them still thinks it is alone (and skips notifications) when the test begins.
    await until(
      () => out.slice(0, -1).every((r) => r.bus.stats.received > 0),
      5_000,
      'the replicas to hear each other',
    );
    return out;
  }

  it('a job submitted on A goes to the idle worker on B; a /runsync waiter on A wakes when B records the result', async () => {
    const [a, b] = await replicas(2);
    const w = await ScriptedWorker.connect(b!.url);
    cleanup.push(() => w.close());
    await w.next('welcome');
    const sync = call(a!.server, 'POST', '/v2/echo/runsync?wait=10000', { body: { input: { n: 1 } } });
    const assign = await w.next('job.assign');
    expect(assign.input).toEqual({ n: 1 });
    // A's NOTIFY reaches B (the assign itself may come first: B's own pump, started when its worker connected, can
    // claim the job as soon as A's insert commits).
    await until(() => b!.bus.stats.received > 0, 5_000, "A's notification on B");
    w.send({ type: 'job.complete', id: assign.id, attempt: assign.attempt, output: { ok: true } });
    const res = await sync;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: assign.id, status: 'COMPLETED', output: { ok: true } });
  });

  it('cancel on A reaches the worker on B; stream chunks from B reach a reader on A', async () => {
    const [a, b] = await replicas(2);
    const w = await ScriptedWorker.connect(b!.url);
    cleanup.push(() => w.close());
    await w.next('welcome');
    const run = await call(a!.server, 'POST', '/v2/echo/run', { body: { input: { n: 2 } } });
    const assign = await w.next('job.assign');
    expect(assign.id).toBe(run.body.id);
    const reader = call(a!.server, 'GET', `/v2/echo/stream/${assign.id}?wait=10000`);
    await new Promise((r) => setTimeout(r, 50)); // the reader is waiting when the chunks arrive
    w.send({ type: 'job.stream', id: assign.id, attempt: assign.attempt, seq: 0, chunks: ['a', 'b'] });
    const got = await reader;
    expect(got.body.stream.map((c: { output: unknown }) => c.output)).toEqual(['a', 'b']);
    const cancelled = await call(a!.server, 'POST', `/v2/echo/cancel/${assign.id}`);
    expect(cancelled.body.status).toBe('CANCELLED');
    const stop = await w.next('job.cancel');
    expect(stop).toMatchObject({ id: assign.id, attempt: assign.attempt, reason: 'cancelled' });
  });

  it('SSE on A gets the chunks a worker on B streams, in order: small ones carried by the notification, large ones read back', async () => {
    const [a, b] = await replicas(2);
    const w = await ScriptedWorker.connect(b!.url);
    cleanup.push(() => w.close());
    await w.next('welcome');
    const run = await call(a!.server, 'POST', '/v2/echo/run', { body: { input: { n: 3 } } });
    const assign = await w.next('job.assign');
    const res = await fetch(`${a!.url}/v2/echo/stream/${run.body.id}`, {
      headers: { authorization: `Bearer ${API_KEY}`, accept: 'text/event-stream' },
    });
    expect(res.status).toBe(200);
    const big = 'x'.repeat(9_000); // too large for one NOTIFY: goes as a bare wake-up
    const sent: unknown[] = [];
    const before = a!.bus.stats.received;
    for (let i = 0; i < 20; i++) {
      const chunk = i === 10 ? { i, big } : { i };
      sent.push(chunk);
      w.send({ type: 'job.stream', id: assign.id, attempt: assign.attempt, seq: i, chunks: [chunk] });
      await new Promise((r) => setTimeout(r, 5));
    }
    w.send({ type: 'job.complete', id: assign.id, attempt: assign.attempt, output: { ok: true } });
    const text = await res.text();
    const got = text
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => (JSON.parse(e.slice(6)) as { output: unknown }).output);
    expect(got).toEqual(sent);
    expect(text).toContain('event: done');
    expect(a!.bus.stats.received - before).toBeGreaterThan(0);
  });

  it('worker presence is shared: /health, /metrics and the catalog agree on both replicas; the rate limit divides between the replicas', async () => {
    const [a, b] = await replicas(2);
    const w = await ScriptedWorker.connect(b!.url, { workerId: 'wb', concurrency: 2 });
    cleanup.push(() => w.close());
    await w.next('welcome');
    const health = async (r: Replica) => (await call(r.server, 'GET', '/v2/echo/health')).body.workers;
    await until(async () => (await health(a!)).idle === 1, 5_000, 'replica A to see the worker on B as idle');
    expect(await health(a!)).toEqual(await health(b!));
    await call(a!.server, 'POST', '/v2/echo/run', { body: { input: {} } });
    const assign = await w.next('job.assign');
    await until(async () => (await health(a!)).running === 1, 5_000, 'replica A to see the worker on B running');
    expect(await health(a!)).toEqual(await health(b!));
    const text = async (r: Replica) =>
      await (await fetch(`${r.url}/metrics`, { headers: { authorization: `Bearer ${API_KEY}` } })).text();
    const line = (t: string) =>
      t.split('\n').find((l) => l.startsWith('berth_workers{endpoint="echo",state="running"}'));
    expect(line(await text(a!))).toBe('berth_workers{endpoint="echo",state="running"} 1');
    expect(line(await text(a!))).toBe(line(await text(b!)));
    // What each replica counts itself carries its replica id; the shared families do not (docs/observability.md).
    for (const r of [a!, b!]) {
      const t = await text(r);
      expect(t).toMatch(new RegExp(`^process_cpu_seconds_total\\{replica="${r.bus.replicaId}"\\} `, 'm'));
      expect(t).toMatch(
        new RegExp(`^berth_http_requests_total\\{replica="${r.bus.replicaId}",route="health",code="200"\\} `, 'm'),
      );
      expect(t).toMatch(/^berth_jobs_completed_total\{endpoint="echo"\} /m);
    }
    expect(a!.bus.replicaId).not.toBe(b!.bus.replicaId);
    const cat = async (r: Replica) =>
      (await call(r.server, 'GET', '/v2/_berth/catalog')).body.endpoints.find((e: { id: string }) => e.id === 'echo');
    expect((await cat(a!)).workers).toEqual((await cat(b!)).workers);
    expect(a!.server.workers.connected('echo')).toHaveLength(0); // the worker really is on B only
    w.send({ type: 'job.complete', id: assign.id, attempt: assign.attempt, output: 1 });
    await w.close();
    await until(
      async () => (await health(a!)).idle + (await health(a!)).running === 0,
      5_000,
      'replica A to see the worker gone',
    );
    // With no worker the limit is the base (2 purges per window): each of the 2 replicas allows its share, 1.
    // (A window boundary in the middle could let one more through: retry once in a fresh window.)
    const purge = (r: Replica) => call(r.server, 'POST', '/v2/echo/purge-queue').then((x) => x.status);
    let got: number[] = [];
    for (let i = 0; i < 2 && got.join() !== '200,429,200,429'; i++) {
      await new Promise((r) => setTimeout(r, 10_000 - (Date.now() % 10_000) + 20));
      got = [await purge(a!), await purge(a!), await purge(b!), await purge(b!)];
    }
    expect(got).toEqual([200, 429, 200, 429]);
  });

  it('three replicas, workers on two of them, jobs submitted on all: every job runs exactly once', async () => {
    const rs = await replicas(3);
    const workers = await Promise.all(
      [rs[1]!, rs[2]!].map(async (r, i) => {
        const w = await ScriptedWorker.connect(r.url, { workerId: `w${i}`, concurrency: 4 });
        cleanup.push(() => w.close());
        await w.next('welcome');
        return w;
      }),
    );
    const ids = new Set<string>();
    for (let i = 0; i < 30; i++)
      ids.add((await call(rs[i % 3]!.server, 'POST', '/v2/echo/run', { body: { input: { i } } })).body.id);
    const seen: string[] = [];
    const end = Date.now() + 10_000;
    while (seen.length < ids.size && Date.now() < end) {
      for (const w of workers) {
        for (const m of w.received.splice(0)) {
          if (m.type !== 'job.assign') continue;
          seen.push(m.id);
          w.send({ type: 'job.complete', id: m.id, attempt: m.attempt, output: 'ok' });
        }
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(seen.sort()).toEqual([...ids].sort());
    const jobs = await until(
      async () => {
        const h = (await call(rs[0]!.server, 'GET', '/v2/echo/health')).body.jobs;
        return h.completed === 30 ? h : undefined;
      },
      5_000,
      'every completion stored',
    );
    expect(jobs).toMatchObject({ completed: 30, inQueue: 0, inProgress: 0, failed: 0 });
  });
});
