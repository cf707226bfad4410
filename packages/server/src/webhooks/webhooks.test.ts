import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory/memory-store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { ScriptedWorker, call, listening, until } from '../testing.test-helpers.js';
import type { BerthServer } from '../server.js';
import type { WebhookOptions } from './webhook-options.js';
import { webhookReceiver } from './receiver.test-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'berth-webhooks-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
/** Fast retries for tests; loopback allowed because the receiver is on 127.0.0.1. */
const FAST: WebhookOptions = { allow: ['loopback'], retryDelayMs: 250, timeoutMs: 400, pollMs: 50, secret: SECRET };

const submit = async (s: BerthServer, webhook: string, input: Record<string, unknown> = { q: 1 }) => {
  const r = await call(s, 'POST', '/v2/echo/run', { body: { input, webhook } });
  expect(r.status).toBe(200);
  return r.body.id as string;
};
const log = async (s: BerthServer, id: string) => (await call(s, 'GET', `/v2/echo/webhooks/${id}`)).body;
const untilState = (s: BerthServer, id: string, state: string, timeoutMs = 5000) =>
  until(
    async () => {
      const l = await log(s, id);
      return l.deliveries?.[0]?.state === state ? l : undefined;
    },
    timeoutMs,
    `webhook of ${id} to be ${state}`,
  );

describe('webhooks to a real receiver', () => {
  it('POSTs the job object plus input and webhook once the job completes, signed and verified by standardwebhooks', async () => {
    await using rx = await webhookReceiver([200]);
    await using t = await listening({ webhooks: FAST });
    const w = await ScriptedWorker.connect(t.url);
    const id = await submit(t.server, rx.url, { prompt: 'hi' });
    const a = await w.next('job.assign');
    w.send({ type: 'job.complete', id, attempt: a.attempt, output: { text: 'hello' } });
    const [req] = await rx.count(1);
    expect(req!.headers['content-type']).toBe('application/json');
    const payload = new Webhook(SECRET).verify(req!.body, req!.headers as Record<string, string>) as Record<
      string,
      unknown
    >;
    expect(payload).toMatchObject({
      id,
      status: 'COMPLETED',
      output: { text: 'hello' },
      input: { prompt: 'hi' },
      webhook: rx.url,
      workerId: 'w1',
    });
    expect(typeof payload['executionTime']).toBe('number');
    expect(req!.headers['webhook-id']).toBe(`msg_${id}_0`);
    // A tampered body or another secret fails verification: the signature really covers them.
    expect(() =>
      new Webhook(SECRET).verify(req!.body.replace('hello', 'HELLO'), req!.headers as Record<string, string>),
    ).toThrow();
    expect(() =>
      new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(
        req!.body,
        req!.headers as Record<string, string>,
      ),
    ).toThrow();
    const l = await untilState(t.server, id, 'delivered');
    expect(l.deliveries[0].attempts).toHaveLength(1);
    expect(l.deliveries[0].attempts[0]).toMatchObject({ status: 200 });
    await w.close();
  });

  it('retries a 500, a redirect (not followed) and a timeout 3 times in all, spaced by retryDelayMs, with one webhook-id', async () => {
    await using other = await webhookReceiver([200]);
    await using rx = await webhookReceiver([500, { status: 302, location: other.url }, 'hang']);
    await using t = await listening({ webhooks: FAST });
    const id = await submit(t.server, rx.url);
    await call(t.server, 'POST', `/v2/echo/cancel/${id}`);
    const got = await rx.count(3);
    const l = await untilState(t.server, id, 'failed');
    await new Promise((r) => setTimeout(r, 700)); // no fourth attempt comes
    expect(rx.received).toHaveLength(3);
    expect(other.received).toHaveLength(0); // the redirect was not followed
    const ids = new Set(got.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    for (const r of got) expect(JSON.parse(r.body)).toMatchObject({ id, status: 'CANCELLED' });
    const gap1 = got[1]!.at - got[0]!.at;
    const gap2 = got[2]!.at - got[1]!.at;
    expect(gap1).toBeGreaterThanOrEqual(240);
    expect(gap1).toBeLessThan(1500);
    expect(gap2).toBeGreaterThanOrEqual(240);
    const attempts = l.deliveries[0].attempts;
    expect(attempts.map((a: { status?: number }) => a.status)).toEqual([500, 302, undefined]);
    expect(attempts[2].error).toMatch(/timeout after 400 ms/);
    expect(l.deliveries[0].nextAttemptAt).toBeNull();
  });

  it('a 2xx after a failure acknowledges: two attempts, delivered', async () => {
    await using rx = await webhookReceiver([503, 204]);
    await using t = await listening({ webhooks: FAST });
    const id = await submit(t.server, rx.url);
    await call(t.server, 'POST', `/v2/echo/cancel/${id}`);
    const l = await untilState(t.server, id, 'delivered');
    expect(l.deliveries[0].attempts.map((a: { status: number }) => a.status)).toEqual([503, 204]);
    await new Promise((r) => setTimeout(r, 400));
    expect(rx.received).toHaveLength(2);
  });

  it.each([
    [
      'memory (the same store object)',
      () => {
        const store = new MemoryStore();
        return () => store;
      },
    ],
    [
      'SQLite (the file reopened)',
      () => {
        const file = join(tmp, `restart-${Math.random()}.sqlite`);
        return () => new SqliteStore({ file });
      },
    ],
  ])('a restart mid-retry continues the delivery from the stored outbox: %s', async (_name, makeStores) => {
    const storeFor = makeStores();
    await using rx = await webhookReceiver([500, 200]);
    const slow: WebhookOptions = { ...FAST, retryDelayMs: 600 };
    let id: string;
    {
      await using a = await listening({ store: storeFor(), webhooks: slow });
      id = await submit(a.server, rx.url);
      await call(a.server, 'POST', `/v2/echo/cancel/${id}`);
      await rx.count(1);
      await until(
        async () => (await log(a.server, id)).deliveries[0]?.attempts.length === 1,
        2000,
        'first attempt recorded',
      );
    } // server A (and its store) is closed here, before its retry is due
    await new Promise((r) => setTimeout(r, 700));
    expect(rx.received).toHaveLength(1);
    await using b = await listening({ store: storeFor(), webhooks: slow });
    const got = await rx.count(2);
    expect(got[1]!.headers['webhook-id']).toBe(got[0]!.headers['webhook-id']);
    new Webhook(SECRET).verify(got[1]!.body, got[1]!.headers as Record<string, string>);
    const l = await untilState(b.server, id, 'delivered');
    expect(l.deliveries[0].attempts.map((x: { status: number }) => x.status)).toEqual([500, 200]);
  });

  it('without an allowance, refuses loopback targets: IP literal, IPv4-mapped IPv6, and a name that resolves to loopback', async () => {
    await using rx = await webhookReceiver([200]);
    await using t = await listening({ webhooks: { ...FAST, allow: [] } });
    const targets = [
      `http://127.0.0.1:${rx.port}/a`,
      `http://[::ffff:127.0.0.1]:${rx.port}/b`,
      `http://localhost:${rx.port}/c`,
      `http://[::1]:${rx.port}/d`,
    ];
    const ids: string[] = [];
    for (const url of targets) {
      const id = await submit(t.server, url);
      await call(t.server, 'POST', `/v2/echo/cancel/${id}`);
      ids.push(id);
    }
    for (const id of ids) {
      const l = await untilState(t.server, id, 'failed');
      expect(l.deliveries[0].attempts, JSON.stringify(l)).toHaveLength(1); // refused targets are not retried
      expect(l.deliveries[0].attempts[0].error).toMatch(/refused: .* is a non-public address \(loopback\)/);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received).toHaveLength(0);
  });

  it('an unsigned delivery (no secret) still carries a webhook-id and no signature', async () => {
    await using rx = await webhookReceiver([200]);
    await using t = await listening({ webhooks: { allow: ['loopback'], pollMs: 50 } });
    const id = await submit(t.server, rx.url);
    await call(t.server, 'POST', `/v2/echo/cancel/${id}`);
    const [req] = await rx.count(1);
    expect(req!.headers['webhook-id']).toBe(`msg_${id}_0`);
    expect(req!.headers['webhook-signature']).toBeUndefined();
  });

  it('a burst of deliveries to a slow receiver is bounded to 64 attempts in flight, and all arrive', async () => {
    await using rx = await webhookReceiver([{ status: 200, delayMs: 150 }]);
    await using t = await listening({ webhooks: FAST, rateLimits: { enabled: false } }); // 150 cancels: over the cancel limit
    const ids = await Promise.all(Array.from({ length: 150 }, () => submit(t.server, rx.url)));
    for (const id of ids) expect((await call(t.server, 'POST', `/v2/echo/cancel/${id}`)).status).toBe(200);
    await rx.count(150, 15_000);
    expect(rx.load.max).toBeLessThanOrEqual(64);
    expect(rx.load.max).toBeGreaterThan(8); // deliveries do run in parallel
    expect(new Set(rx.received.map((r) => r.headers['webhook-id'])).size).toBe(150);
  });

  it('the webhook log is 404 for an unknown job and lists nothing for a job without webhook', async () => {
    await using t = await listening({ webhooks: FAST });
    expect((await call(t.server, 'GET', '/v2/echo/webhooks/nope')).status).toBe(404);
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    expect(await log(t.server, id)).toEqual({ id, webhook: null, webhookEvents: null, deliveries: [] });
  });
});
