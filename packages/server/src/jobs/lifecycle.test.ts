import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { API_KEY, ScriptedWorker, bodyReader, call, listening, until, untilStatus } from '../testing.test-helpers.js';
import type { BerthServer } from '../server.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/types.js';

// The whole lifecycle runs on both stores (SQLite in a private in-memory database: same code path, no files).
const STORES: [string, () => Store][] = [
  ['memory store', () => new MemoryStore()],
  ['SQLite store', () => new SqliteStore({ file: ':memory:' })],
];

const run = async (s: BerthServer, input: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  (await call(s, 'POST', '/v2/echo/run', { body: { input, ...extra } })).body.id as string;
const status = async (s: BerthServer, id: string) => (await call(s, 'GET', `/v2/echo/status/${id}`)).body;

describe.each(STORES)('job lifecycle with a worker on a real socket (%s)', (_name, makeStore) => {
  it('dispatches with the attempt number, completes, and reports delayTime/executionTime in ms', async () => {
    await using t = await listening({ store: makeStore() });
    const w = await ScriptedWorker.connect(t.url);
    await w.next('welcome');
    const id = await run(t.server, { x: 1 });
    const a = await w.next('job.assign');
    expect(a).toMatchObject({ id, attempt: 1, input: { x: 1 } });
    expect((await status(t.server, id)).status).toBe('IN_PROGRESS');
    await new Promise((r) => setTimeout(r, 30));
    w.send({ type: 'job.complete', id, attempt: 1, output: { y: 2 } });
    const done = await untilStatus(t.server, 'echo', id, 'COMPLETED');
    expect(done.output).toEqual({ y: 2 });
    expect(done.workerId).toBe('w1');
    expect(Number.isInteger(done.delayTime) && Number.isInteger(done.executionTime)).toBe(true);
    expect(done.executionTime).toBeGreaterThanOrEqual(25);
    await w.close();
  });

  it('never pushes more jobs than the worker concurrency (credits) and follows concurrency changes', async () => {
    await using t = await listening({ store: makeStore() });
    const w = await ScriptedWorker.connect(t.url, { concurrency: 2 });
    await w.next('welcome');
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await run(t.server, { i }));
    await w.next('job.assign');
    const second = await w.next('job.assign');
    await new Promise((r) => setTimeout(r, 100));
    expect(w.count('job.assign')).toBe(2);
    w.send({ type: 'job.complete', id: second.id, attempt: 1, output: null });
    await w.next('job.assign');
    await new Promise((r) => setTimeout(r, 50));
    expect(w.count('job.assign')).toBe(3);
    w.send({ type: 'concurrency', concurrency: 4 });
    await w.next('job.assign');
    await w.next('job.assign');
    expect(w.count('job.assign')).toBe(5);
    const health = (await call(t.server, 'GET', '/v2/echo/health')).body;
    expect(health.jobs.inProgress).toBe(4);
    expect(health.workers.running).toBe(1);
    await w.close();
  });

  it('runsync returns at completion; a failure is a FAILED job object with the error', async () => {
    await using t = await listening({ store: makeStore() });
    const w = await ScriptedWorker.connect(t.url);
    const pending = call(t.server, 'POST', '/v2/echo/runsync', { body: { input: { q: 1 } } });
    const a = await w.next('job.assign');
    expect(a.id.startsWith('sync-')).toBe(true);
    w.send({ type: 'job.fail', id: a.id, attempt: 1, error: 'boom: bad input' });
    const r = await pending;
    expect(r.body).toMatchObject({ id: a.id, status: 'FAILED', error: 'boom: bad input' });
    await w.close();
  });

  it('progress shows as output (and progress) while running, never overwriting the final output', async () => {
    await using t = await listening({ store: makeStore() });
    const w = await ScriptedWorker.connect(t.url);
    const id = await run(t.server);
    await w.next('job.assign');
    w.send({ type: 'job.progress', id, attempt: 1, progress: { pct: 50 } });
    const mid = await until(async () => {
      const s = await status(t.server, id);
      return s.progress ? s : undefined;
    });
    expect(mid).toMatchObject({ status: 'IN_PROGRESS', output: { pct: 50 }, progress: { pct: 50 } });
    w.send({ type: 'job.complete', id, attempt: 1, output: 'final' });
    w.send({ type: 'job.progress', id, attempt: 1, progress: { pct: 99 } });
    const end = await untilStatus(t.server, 'echo', id, 'COMPLETED');
    await new Promise((r) => setTimeout(r, 30));
    expect(await status(t.server, id)).toEqual(end);
    expect(end.output).toBe('final');
    expect(end.progress).toBeUndefined();
    await w.close();
  });

  it('cancel of a running job tells the worker (job.cancel with the attempt) and drops late output', async () => {
    await using t = await listening({ store: makeStore() });
    const w = await ScriptedWorker.connect(t.url);
    const id = await run(t.server);
    await w.next('job.assign');
    const c = await call(t.server, 'POST', `/v2/echo/cancel/${id}`);
    expect(c.body).toMatchObject({ id, status: 'CANCELLED' });
    expect(await w.next('job.cancel')).toMatchObject({ id, attempt: 1, reason: 'cancelled' });
    w.send({ type: 'job.stream', id, attempt: 1, seq: 0, chunks: ['late'] });
    w.send({ type: 'job.complete', id, attempt: 1, output: 'late' });
    await new Promise((r) => setTimeout(r, 50));
    const s = await status(t.server, id);
    expect(s.status).toBe('CANCELLED');
    expect(s.output).toBeUndefined();
    // the released credit takes the next job
    const next = await run(t.server);
    expect((await w.next('job.assign')).id).toBe(next);
    await w.close();
  });

  it('retry: FAILED -> IN_QUEUE with the same id and input, output cleared, retries + 1, new attempt', async () => {
    await using t = await listening({ store: makeStore() });
    const w = await ScriptedWorker.connect(t.url);
    const id = await run(t.server, { n: 7 });
    await w.next('job.assign');
    w.send({ type: 'job.fail', id, attempt: 1, error: 'nope' });
    await untilStatus(t.server, 'echo', id, 'FAILED');
    const r = await call(t.server, 'POST', `/v2/echo/retry/${id}`);
    expect(r.body).toEqual({ id, status: 'IN_QUEUE' });
    const again = await w.next('job.assign');
    expect(again).toMatchObject({ id, attempt: 2, input: { n: 7 } });
    const s = await status(t.server, id);
    expect(s.error).toBeUndefined();
    expect(s.retries).toBe(1);
    w.send({ type: 'job.fail', id, attempt: 1, error: 'stale' });
    w.send({ type: 'job.complete', id, attempt: 2, output: 'ok' });
    await untilStatus(t.server, 'echo', id, 'COMPLETED');
    expect((await call(t.server, 'GET', '/v2/echo/health')).body.jobs).toMatchObject({
      completed: 1,
      failed: 1,
      retried: 1,
    });
    await w.close();
  });

  it('/stream long-polls with consume semantics and ends with the terminal status', async () => {
    await using t = await listening({ store: makeStore() });
    const w = await ScriptedWorker.connect(t.url);
    const id = await run(t.server);
    await w.next('job.assign');
    const first = call(t.server, 'GET', `/v2/echo/stream/${id}?wait=5000`);
    await new Promise((r) => setTimeout(r, 50));
    w.send({ type: 'job.stream', id, attempt: 1, seq: 0, chunks: ['a', 'b'] });
    expect((await first).body).toEqual({ id, status: 'IN_PROGRESS', stream: [{ output: 'a' }, { output: 'b' }] });
    w.send({ type: 'job.stream', id, attempt: 1, seq: 1, chunks: ['b', 'c'] }); // 'b' re-sent: skipped
    w.send({ type: 'job.complete', id, attempt: 1, output: ['a', 'b', 'c'] });
    await untilStatus(t.server, 'echo', id, 'COMPLETED');
    expect((await call(t.server, 'GET', `/v2/echo/stream/${id}`)).body).toEqual({
      id,
      status: 'COMPLETED',
      stream: [{ output: 'c' }],
    });
    expect((await call(t.server, 'GET', `/v2/echo/stream/${id}`)).body).toEqual({
      id,
      status: 'COMPLETED',
      stream: [],
    });
    await w.close();
  });

  it('/stream of a non-streaming endpoint is 400 stream_not_supported', async () => {
    await using t = await listening({ store: makeStore() });
    const w = await ScriptedWorker.connect(t.url, { stream: false });
    await w.next('welcome');
    const id = await run(t.server);
    const r = await call(t.server, 'GET', `/v2/echo/stream/${id}`);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('stream_not_supported');
    await w.close();
  });

  it('SSE pushes each chunk as it is produced, then a done event', async () => {
    await using t = await listening({ store: makeStore() });
    const w = await ScriptedWorker.connect(t.url);
    const id = await run(t.server);
    await w.next('job.assign');
    const res = await fetch(`${t.url}/v2/echo/stream/${id}`, {
      headers: { authorization: `Bearer ${API_KEY}`, accept: 'text/event-stream' },
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const body = bodyReader(res);
    const readUntil = body.until;
    w.send({ type: 'job.stream', id, attempt: 1, seq: 0, chunks: [{ i: 0 }] });
    await readUntil('{"output":{"i":0}}');
    expect(body.text).not.toContain('event: done'); // the first chunk arrived while the job still runs
    w.send({ type: 'job.stream', id, attempt: 1, seq: 1, chunks: [{ i: 1 }] });
    await readUntil('{"output":{"i":1}}');
    w.send({ type: 'job.complete', id, attempt: 1, output: [{ i: 0 }, { i: 1 }] });
    await readUntil('event: done');
    await readUntil('\n\n');
    expect(body.text).toContain('"status":"COMPLETED"');
    await w.close();
  });

  it('executionTimeout and ttl are enforced by sweeps (manual clock): TIMED_OUT + stop, then deletion', async () => {
    const clock = new ManualClock();
    await using t = await listening({ clock, store: makeStore() });
    const w = await ScriptedWorker.connect(t.url);
    const id = await run(t.server, {}, { policy: { executionTimeout: 5000, ttl: 60_000 } });
    await w.next('job.assign');
    clock.advance(4999);
    expect((await t.server.sweep()).timedOut).toBe(0);
    clock.advance(2);
    expect((await t.server.sweep()).timedOut).toBe(1);
    expect(await w.next('job.cancel')).toMatchObject({ id, reason: 'timed_out' });
    const s = await status(t.server, id);
    expect(s.status).toBe('TIMED_OUT');
    expect(s.error).toContain('5000');
    // retryable
    expect((await call(t.server, 'POST', `/v2/echo/retry/${id}`)).body.status).toBe('IN_QUEUE');
    clock.advance(60_000);
    expect((await t.server.sweep()).expired).toBe(1);
    expect((await call(t.server, 'GET', `/v2/echo/status/${id}`)).status).toBe(404);
    await w.close();
  });

  it('?ttl= on status sets the remaining lifespan from now; retention deletes terminal jobs', async () => {
    const clock = new ManualClock();
    await using t = await listening({ clock, store: makeStore() });
    const id = await run(t.server);
    expect((await call(t.server, 'GET', `/v2/echo/status/${id}?ttl=20000`)).status).toBe(200);
    clock.advance(19_999);
    await t.server.sweep();
    expect((await call(t.server, 'GET', `/v2/echo/status/${id}`)).status).toBe(200);
    clock.advance(2);
    await t.server.sweep();
    expect((await call(t.server, 'GET', `/v2/echo/status/${id}`)).body.code).toBe('job_not_found');

    const id2 = await run(t.server);
    await call(t.server, 'POST', `/v2/echo/cancel/${id2}`);
    clock.advance(30 * 60_000 - 1);
    await t.server.sweep();
    expect((await call(t.server, 'GET', `/v2/echo/status/${id2}`)).status).toBe(200);
    clock.advance(2);
    expect((await t.server.sweep()).retained).toBe(1);
    expect((await call(t.server, 'GET', `/v2/echo/status/${id2}`)).status).toBe(404);
  });

  it('a running job whose ttl elapses is deleted and its worker told to stop', async () => {
    const clock = new ManualClock();
    await using t = await listening({ clock, store: makeStore() });
    const w = await ScriptedWorker.connect(t.url);
    const id = await run(t.server, {}, { policy: { ttl: 10_000 } });
    await w.next('job.assign');
    clock.advance(10_001);
    await t.server.sweep();
    expect(await w.next('job.cancel')).toMatchObject({ id, reason: 'expired' });
    expect((await call(t.server, 'GET', `/v2/echo/status/${id}`)).status).toBe(404);
    await w.close();
  });
});
