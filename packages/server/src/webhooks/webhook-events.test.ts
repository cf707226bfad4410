// Webhooks for every event, over real sockets: a scripted worker streams and reports progress for about 1.3 s,
// a real receiver records what arrives. Events arrive in order per job, output and progress at most one per
// 500 ms (measured on the server's delivery times and on arrival; the one held when the job ends goes at once,
// just before completed), every chunk delivered once, the default
// (no webhookEvents) unchanged, and an exponential retry schedule measured on arrival.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { ScriptedWorker, call, listening, until } from '../testing.test-helpers.js';
import type { BerthServer } from '../server.js';
import type { Store } from '../store/types.js';
import type { WebhookOptions } from './webhook-options.js';
import { webhookReceiver, type Received } from './receiver.test-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'berth-webhook-events-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const FAST: WebhookOptions = { allow: ['loopback'], retryDelayMs: 250, timeoutMs: 2_000, pollMs: 50, secret: SECRET };
const ALL = ['start', 'progress', 'output', 'completed'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const bodyOf = (r: Received) => JSON.parse(r.body) as Record<string, any>;
const log = async (s: BerthServer, id: string) => (await call(s, 'GET', `/v2/echo/webhooks/${id}`)).body;
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

async function submit(s: BerthServer, body: Record<string, unknown>) {
  const r = await call(s, 'POST', '/v2/echo/run', { body: { input: { q: 1 }, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.id as string;
}

describe.each([
  ['memory', () => undefined],
  ['SQLite', () => new SqliteStore({ file: join(tmp, `events-${Math.random()}.sqlite`) })],
] as [string, () => Store | undefined][])('webhook events (%s store)', (_name, makeStore) => {
  it('start, throttled progress and output, completed: in order, every chunk once, at most one per 500 ms', async () => {
    await using rx = await webhookReceiver([200]);
    const store = makeStore();
    await using t = await listening({ webhooks: FAST, ...(store ? { store } : {}) });
    const w = await ScriptedWorker.connect(t.url);
    const id = await submit(t.server, { webhook: rx.url, webhookEvents: ALL });
    const a = await w.next('job.assign');
    const chunks: string[] = [];
    const began = performance.now();
    for (let i = 0; i < 33; i++) {
      chunks.push(`tok${i} `);
      w.send({ type: 'job.stream', id, attempt: a.attempt, seq: i, chunks: [`tok${i} `] });
      w.send({ type: 'job.progress', id, attempt: a.attempt, progress: { step: i } });
      await sleep(40);
    }
    const ranMs = performance.now() - began;
    w.send({ type: 'job.complete', id, attempt: a.attempt, output: { text: chunks.join('') } });
    await until(() => rx.received.some((r) => r.headers['webhook-event'] === 'completed'), 10_000, 'completed');
    await sleep(300); // nothing comes after completed
    const got = rx.received;
    const events = got.map((r) => r.headers['webhook-event'] as string);
    for (const r of got) {
      new Webhook(SECRET).verify(r.body, r.headers as Record<string, string>); // every event signed as today
      expect(bodyOf(r)).toMatchObject({ id, event: r.headers['webhook-event'], webhook: rx.url });
      // Only completed carries the input (issue #36: a big input copied into every progress row filled the outbox).
      expect(bodyOf(r)['input']).toEqual(r.headers['webhook-event'] === 'completed' ? { q: 1 } : undefined);
    }
    expect(events[0]).toBe('start');
    expect(events.at(-1)).toBe('completed');
    expect(events.filter((e) => e === 'start' || e === 'completed')).toEqual(['start', 'completed']);
    expect(bodyOf(got[0]!)).toMatchObject({ status: 'IN_PROGRESS', workerId: 'w1' });
    expect(bodyOf(got.at(-1)!)).toMatchObject({ status: 'COMPLETED', output: { text: chunks.join('') } });

    // Output: every chunk exactly once, in order, in a few batched deliveries.
    const outputs = got.filter((r) => r.headers['webhook-event'] === 'output');
    const streamed = outputs.flatMap((r) => bodyOf(r)['stream'].map((c: { output: string }) => c.output));
    expect(streamed).toEqual(chunks);
    // Progress: the last value is always sent.
    const progress = got.filter((r) => r.headers['webhook-event'] === 'progress');
    expect(bodyOf(progress.at(-1)!)['progress']).toEqual({ step: 32 });
    for (const set of [outputs, progress]) {
      expect(set.length).toBeGreaterThanOrEqual(2);
      expect(set.length).toBeLessThanOrEqual(Math.floor(ranMs / 500) + 2);
    }

    // The log shows every delivery with its event; its creation times are the throttle's send times.
    const l = await log(t.server, id);
    expect(l.webhookEvents).toEqual(ALL);
    expect(l.deliveries.map((d: { webhookId: string }) => d.webhookId).sort()).toEqual(
      got.map((r) => r.headers['webhook-id']).sort(),
    );
    const completedAt = l.deliveries.find((d: { event: string }) => d.event === 'completed').createdAt;
    for (const kind of ['output', 'progress']) {
      const created = l.deliveries
        .filter((d: { event: string }) => d.event === kind)
        .map((d: { createdAt: number }) => d.createdAt);
      // At most one per 500 ms; only the held one sent as the job ends (just before completed) may come sooner.
      for (const g of gaps(created).slice(0, -1)) expect(g).toBeGreaterThanOrEqual(500);
      const lastGap = gaps(created).at(-1)!;
      if (lastGap < 500) expect(completedAt - created.at(-1)!).toBeLessThan(100);
      const arrived = got.filter((r) => r.headers['webhook-event'] === kind).map((r) => r.at);
      // On arrival (loosely: an earlier delivery of the job may have waited for the one before it): the same spacing.
      for (const g of gaps(arrived).slice(0, -1)) expect(g).toBeGreaterThanOrEqual(250);
      console.log(
        `${_name} ${kind}: ${arrived.length} deliveries for 33 events in ${Math.round(ranMs)} ms; arrival gaps ms ${gaps(arrived).map(Math.round).join(', ')}`,
      );
    }
    expect(l.deliveries.every((d: { state: string }) => d.state === 'delivered')).toBe(true);
    await w.close();
  });
});

describe('webhook events: defaults and filters', () => {
  it('without webhookEvents: only the completed delivery, as before (progress and chunks send nothing)', async () => {
    await using rx = await webhookReceiver([200]);
    await using t = await listening({ webhooks: FAST });
    const w = await ScriptedWorker.connect(t.url);
    const id = await submit(t.server, { webhook: rx.url });
    const a = await w.next('job.assign');
    w.send({ type: 'job.progress', id, attempt: a.attempt, progress: 0.5 });
    w.send({ type: 'job.stream', id, attempt: a.attempt, seq: 0, chunks: ['x'] });
    await sleep(100);
    w.send({ type: 'job.complete', id, attempt: a.attempt, output: 'done' });
    await rx.count(1);
    await sleep(600);
    expect(rx.received).toHaveLength(1);
    const [r] = rx.received;
    expect(r!.headers['webhook-id']).toBe(`msg_${id}_0`);
    expect(r!.headers['webhook-event']).toBe('completed');
    expect(bodyOf(r!)).toMatchObject({ id, status: 'COMPLETED', output: 'done', event: 'completed' });
    expect((await log(t.server, id)).webhookEvents).toEqual(['completed']);
    await w.close();
  });

  it('webhookEvents without completed: start only, no terminal delivery', async () => {
    await using rx = await webhookReceiver([200]);
    await using t = await listening({ webhooks: FAST });
    const w = await ScriptedWorker.connect(t.url);
    const id = await submit(t.server, { webhook: rx.url, webhookEvents: ['start'] });
    const a = await w.next('job.assign');
    w.send({ type: 'job.complete', id, attempt: a.attempt, output: 'done' });
    await rx.count(1);
    await sleep(500);
    expect(rx.received.map((r) => r.headers['webhook-event'])).toEqual(['start']);
    await w.close();
  });

  it('refuses bad webhookEvents with 400 invalid_request', async () => {
    await using t = await listening({ webhooks: FAST });
    for (const body of [
      { webhookEvents: ['completed'] }, // no webhook
      { webhook: 'http://127.0.0.1:1/h', webhookEvents: ['finished'] },
      { webhook: 'http://127.0.0.1:1/h', webhookEvents: ['start', 'start'] },
      { webhook: 'http://127.0.0.1:1/h', webhookEvents: [] },
      { webhook: 'http://127.0.0.1:1/h\nx' },
    ]) {
      const r = await call(t.server, 'POST', '/v2/echo/run', { body: { input: {}, ...body } });
      expect([r.status, r.body.code], JSON.stringify(body)).toEqual([400, 'invalid_request']);
    }
  });

  it('retries on an exponential schedule with a cap (100 ms, x3, cap 500 ms: gaps 100, 300, 500)', async () => {
    await using rx = await webhookReceiver([500]);
    const schedule = { retryDelayMs: 100, retryBackoff: 3, maxRetryDelayMs: 500, attempts: 4 };
    await using t = await listening({ webhooks: { ...FAST, ...schedule, pollMs: 20 } });
    const id = await submit(t.server, { webhook: rx.url });
    await call(t.server, 'POST', `/v2/echo/cancel/${id}`);
    const got = await rx.count(4, 5_000);
    await sleep(700);
    expect(rx.received).toHaveLength(4);
    const g = gaps(got.map((r) => r.at));
    console.log(`retry gaps ms ${g.map(Math.round).join(', ')} (schedule 100, 300, 500)`);
    expect(g[0]).toBeGreaterThanOrEqual(95);
    expect(g[0]).toBeLessThan(280);
    expect(g[1]).toBeGreaterThanOrEqual(295);
    expect(g[1]).toBeLessThan(480);
    expect(g[2]).toBeGreaterThanOrEqual(495);
    expect(g[2]).toBeLessThan(700);
    const l = await until(async () => {
      const x = await log(t.server, id);
      return x.deliveries[0]?.state === 'failed' ? x : undefined;
    });
    expect(l.deliveries[0].attempts).toHaveLength(4);
  });
});
