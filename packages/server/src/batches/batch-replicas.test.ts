import { afterEach, describe, expect, it } from 'vitest';
import { PgClusterBus } from '../cluster/pg-cluster-bus.js';
import type { BerthServer } from '../server.js';
import { PgStore } from '../store/postgres/pg-store.js';
import { dropSchema, PG_TEST_URL, pgUnavailable, testSchema } from '../store/postgres/pg-test-db.test-helpers.js';
import { call, ScriptedWorker, testServer, until } from '../testing.test-helpers.js';
import { webhookReceiver } from '../webhooks/receiver.test-helpers.js';

// Batch Jobs on two control planes sharing one PostgreSQL schema (each its own PgStore and LISTEN connection, as
// two `berth serve` replicas): a batch built through A and B runs on B's worker, is read the same from both,
// cancel through A stops the job running on B, and the terminal webhook is sent once.
const skip = await pgUnavailable();
const COUNTS = [
  'requestQueued',
  'requestInProgress',
  'requestCompleted',
  'requestFailed',
  'requestCancelled',
  'requestExpired',
];
const HOOKS = { allow: ['loopback' as const], retryDelayMs: 250, timeoutMs: 400, pollMs: 50 };

describe.skipIf(skip !== undefined)(`Batch Jobs on two PostgreSQL replicas${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  async function replicas(): Promise<{ server: BerthServer; url: string }[]> {
    const schema = testSchema();
    cleanup.push(() => dropSchema(schema));
    const out: { server: BerthServer; url: string; bus: PgClusterBus }[] = [];
    for (let i = 0; i < 2; i++) {
      const store = await PgStore.open({ url: PG_TEST_URL, schema, poolSize: 4 });
      const bus = new PgClusterBus(store);
      const server = testServer({ store, cluster: bus, webhooks: HOOKS });
      const { url } = await server.listen({ port: 0 });
      cleanup.push(() => server.close({ drainMs: 0 }));
      out.push({ server, url, bus });
    }
    await until(() => out[0]!.bus.stats.received > 0, 5_000, 'the replicas to hear each other');
    return out;
  }

  const summary = async (s: BerthServer, id: string) => {
    const b = (await call(s, 'GET', `/v2/echo/batch/${id}`)).body;
    expect(COUNTS.reduce((n, k) => n + (b[k] as number), 0)).toBe(b.requestTotal);
    return b;
  };

  it('builds on both, runs on B after interactive jobs, reads the same everywhere, ends once with one webhook', async () => {
    await using rx = await webhookReceiver([200]);
    const [a, b] = await replicas();
    const id = (
      await call(a!.server, 'POST', '/v2/echo/batch', { body: { webhook: rx.url, requests: [{ input: { i: 0 } }] } })
    ).body.id as string;
    await call(b!.server, 'POST', `/v2/echo/batch/${id}/requests`, {
      body: [{ input: { i: 1 } }, { input: { i: 2 } }],
    });
    expect((await summary(a!.server, id)).requestTotal).toBe(3);
    const w = await ScriptedWorker.connect(b!.url, { concurrency: 1 });
    cleanup.push(() => w.close());
    await w.next('welcome');
    const interactive = (await call(a!.server, 'POST', '/v2/echo/run', { body: { input: { busy: true } } })).body.id;
    const first = await w.next('job.assign');
    expect(first.id).toBe(interactive);
    await call(a!.server, 'POST', `/v2/echo/batch/${id}/finalize`);
    const late = (await call(a!.server, 'POST', '/v2/echo/run', { body: { input: { late: true } } })).body.id;
    w.send({ type: 'job.complete', id: first.id, attempt: first.attempt, output: null });
    const second = await w.next('job.assign');
    expect(second.id).toBe(late); // submitted after the batch was finalized, claimed before any of it
    w.send({ type: 'job.complete', id: second.id, attempt: second.attempt, output: null });
    for (let i = 0; i < 3; i++) {
      const j = await w.next('job.assign');
      expect(j.batchId).toBe(id);
      w.send({ type: 'job.complete', id: j.id, attempt: j.attempt, output: { i: j.input['i'] } });
    }
    const ended = await until(
      async () => {
        const x = await summary(a!.server, id);
        return x.finishedAt ? x : undefined;
      },
      10_000,
      'the batch to end',
    );
    expect(ended).toMatchObject({ status: 'FINALIZED', done: true, requestCompleted: 3 });
    expect(await summary(b!.server, id)).toEqual(ended);
    await rx.count(1);
    await a!.server.sweep();
    await b!.server.sweep();
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received).toHaveLength(1);
    // Pages through either replica: every request once.
    const ids = new Set<string>();
    for (const s of [a!.server, b!.server]) {
      let cursor: string | null = null;
      const seen: string[] = [];
      do {
        const r = await call(s, 'GET', `/v2/echo/batch/${id}/requests?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...r.body.requests.map((x: { id: string }) => x.id));
        cursor = r.body.nextCursor;
      } while (cursor);
      expect(seen).toHaveLength(3);
      for (const x of seen) ids.add(x);
    }
    expect(ids.size).toBe(3);
  }, 60_000);

  it('cancel through A stops the request running on B and cancels the queued ones', async () => {
    const [a, b] = await replicas();
    const id = (
      await call(a!.server, 'POST', '/v2/echo/batch', { body: [{ input: {} }, { input: {} }, { input: {} }] })
    ).body.id as string;
    const w = await ScriptedWorker.connect(b!.url, { concurrency: 1 });
    cleanup.push(() => w.close());
    await w.next('welcome');
    await call(b!.server, 'POST', `/v2/echo/batch/${id}/finalize`);
    const running = await w.next('job.assign');
    const c = await call(a!.server, 'POST', `/v2/echo/batch/${id}/cancel`);
    expect(c.body).toMatchObject({ status: 'CANCELLED', requestCancelled: 3, requestTotal: 3 });
    const stop = await w.next('job.cancel');
    expect(stop).toMatchObject({ id: running.id, reason: 'cancelled' });
    expect((await summary(b!.server, id)).finishedAt).toBeGreaterThan(0);
  }, 60_000);
});
