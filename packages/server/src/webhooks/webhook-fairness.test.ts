// Issue #36, webhooks, over real sockets: jobs streaming progress to a receiver that holds each request 4 s do not
// delay another job's completed webhook to another receiver (a slot is held only while an attempt is on the
// wire, and a host gets at most 16), no webhook-id arrives twice, a slow receiver gets the newest progress rather
// than a backlog (undelivered progress is replaced), and progress/output events do not carry the job input.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/types.js';
import { ScriptedWorker, call, listening, until } from '../testing.test-helpers.js';
import { MAX_EVENT_BYTES_PER_JOB } from './event-webhooks.js';
import type { WebhookOptions } from './webhook-options.js';
import { webhookReceiver, type Received } from './receiver.test-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'berth-webhook-fair-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const OPTS: WebhookOptions = { allow: ['loopback'], timeoutMs: 10_000, retryDelayMs: 250, pollMs: 50 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const eventOf = (r: Received) => r.headers['webhook-event'] as string;
const bodyOf = (r: Received) => JSON.parse(r.body) as Record<string, any>;

async function submit(t: { server: Parameters<typeof call>[0] }, body: Record<string, unknown>) {
  const r = await call(t.server, 'POST', '/v2/echo/run', { body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.id as string;
}

describe.each([
  ['memory', () => undefined],
  ['SQLite', () => new SqliteStore({ file: join(tmp, `fair-${Math.random()}.sqlite`) })],
] as [string, () => Store | undefined][])('webhook sender fairness (%s store)', (name, makeStore) => {
  it('8 jobs streaming progress to a 4 s receiver: another job’s completed arrives within 1 s, no id twice', async () => {
    await using slow = await webhookReceiver([{ status: 200, delayMs: 4_000 }]);
    await using fast = await webhookReceiver([200]);
    const store = makeStore();
    await using t = await listening({ webhooks: OPTS, ...(store ? { store } : {}) });
    const w = await ScriptedWorker.connect(t.url, { concurrency: 10 });
    const streaming: { id: string; attempt: number }[] = [];
    for (let i = 0; i < 8; i++) {
      const id = await submit(t, { input: { i }, webhook: slow.url, webhookEvents: ['progress', 'completed'] });
      const a = await w.next('job.assign');
      streaming.push({ id, attempt: a.attempt });
    }
    // 8 jobs x 2 progress deliveries a second (the 500 ms throttle): 64 slots were full after 4 s before.
    let step = 0;
    const ticker = setInterval(() => {
      step++;
      for (const j of streaming) w.send({ type: 'job.progress', id: j.id, attempt: j.attempt, progress: { step } });
    }, 50);
    try {
      await sleep(5_000);
      const other = await submit(t, { input: { other: true }, webhook: fast.url });
      const a = await w.next('job.assign');
      const t0 = performance.now();
      w.send({ type: 'job.complete', id: other, attempt: a.attempt, output: 'done' });
      const [got] = await fast.count(1, 10_000);
      const lateMs = got!.at - t0;
      console.log(`${name}: the other job's completed arrived ${Math.round(lateMs)} ms after it finished`);
      expect(lateMs).toBeLessThan(1_000);
      await sleep(1_000);
    } finally {
      clearInterval(ticker);
    }
    const last = step;
    for (const j of streaming) w.send({ type: 'job.complete', id: j.id, attempt: j.attempt, output: 'ok' });
    await until(
      () => slow.received.filter((r) => eventOf(r) === 'completed').length === 8,
      20_000,
      'the completed of the 8 streaming jobs',
    );
    const ids = slow.received.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(ids.length); // no webhook-id twice
    for (const j of streaming) {
      const mine = slow.received.filter((r) => bodyOf(r)['id'] === j.id);
      const progress = mine.filter((r) => eventOf(r) === 'progress');
      // About 8 s of 4 s requests: a handful each, not the 16 the throttle produced; the newest state is sent last.
      expect(progress.length).toBeLessThanOrEqual(5);
      expect(bodyOf(progress.at(-1)!)['progress'].step).toBeGreaterThanOrEqual(last - 2);
      expect(eventOf(mine.at(-1)!)).toBe('completed');
      for (const r of progress) expect(bodyOf(r)['input']).toBeUndefined();
    }
    console.log(
      `${name}: ${slow.received.length} POSTs to the slow receiver (${ids.length} ids, ${new Set(ids).size} distinct), at most ${slow.load.max} at once`,
    );
    await w.close();
  }, 60_000);
});

describe('webhook event bodies', () => {
  it('a 0.9 MB input is in completed only: progress and output bodies stay small', async () => {
    await using rx = await webhookReceiver([200]);
    await using t = await listening({ webhooks: OPTS });
    const w = await ScriptedWorker.connect(t.url);
    const input = { text: 'x'.repeat(900_000) };
    const id = await submit(t, { input, webhook: rx.url, webhookEvents: ['progress', 'output', 'completed'] });
    const a = await w.next('job.assign');
    for (let i = 0; i < 30; i++) {
      w.send({ type: 'job.progress', id, attempt: a.attempt, progress: i });
      w.send({ type: 'job.stream', id, attempt: a.attempt, seq: i, chunks: [`c${i}`] });
      await sleep(100);
    }
    w.send({ type: 'job.complete', id, attempt: a.attempt, output: 'done' });
    await until(() => rx.received.some((r) => eventOf(r) === 'completed'), 10_000, 'completed');
    const events = rx.received.filter((r) => eventOf(r) !== 'completed');
    const eventBytes = events.reduce((n, r) => n + r.body.length, 0);
    const completed = rx.received.find((r) => eventOf(r) === 'completed')!;
    console.log(
      `0.9 MB input, 3 s of progress and output: ${events.length} event bodies, ${eventBytes} bytes in all; completed ${completed.body.length} bytes`,
    );
    expect(events.length).toBeGreaterThanOrEqual(4);
    for (const r of events) expect(r.body.length).toBeLessThan(1_000);
    expect(bodyOf(completed)['input']).toEqual(input);
    const chunks = events.filter((r) => eventOf(r) === 'output').flatMap((r) => bodyOf(r)['stream']);
    expect(chunks.map((c: { output: string }) => c.output)).toEqual(Array.from({ length: 30 }, (_, i) => `c${i}`));
    expect(MAX_EVENT_BYTES_PER_JOB).toBeGreaterThan(eventBytes);
    await w.close();
  });
});
