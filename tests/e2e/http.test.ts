// The queue API over plain fetch, against `berth dev` running examples/basic.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASIC_ENDPOINTS, pollUntil, startBerthDev, type BerthDev } from './harness.test-helpers.js';
import { readSse, type SseEvent } from './sse.test-helpers.js';

let berth: BerthDev;

beforeAll(async () => {
  berth = await startBerthDev({ waitForWorkers: BASIC_ENDPOINTS });
});
afterAll(async () => {
  await berth?.[Symbol.asyncDispose]();
});

const TERMINAL = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];
const status = (ep: string, id: string) => berth.json(`/v2/${ep}/status/${id}`);
const waitForStatus = (ep: string, id: string, want: string, timeoutMs = 10_000) =>
  pollUntil(
    () => status(ep, id),
    (r) => r.body?.status === want,
    timeoutMs,
  );

describe('retry', () => {
  it('FAILED -> POST /retry -> IN_QUEUE with the same id -> FAILED again with retries 1', async () => {
    const first = await berth.post('/v2/fail/runsync', { input: { message: 'boom' } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'FAILED', error: expect.stringContaining('boom') });
    const id: string = first.body.id;

    const retry = await berth.post(`/v2/fail/retry/${id}`);
    expect(retry).toMatchObject({ status: 200, body: { id, status: 'IN_QUEUE' } });

    const again = await pollUntil(
      () => status('fail', id),
      (r) => TERMINAL.includes(r.body?.status),
      10_000,
    );
    expect(again.body).toMatchObject({ id, status: 'FAILED', retries: 1, error: expect.stringContaining('boom') });
  });

  it('refuses to retry a job that did not fail: 409 job_not_retryable', async () => {
    const done = await berth.post('/v2/echo/runsync', { input: { a: 1 } });
    expect(done.body.status).toBe('COMPLETED');
    const retry = await berth.post(`/v2/echo/retry/${done.body.id}`);
    expect(retry).toMatchObject({ status: 409, body: { code: 'job_not_retryable', error: expect.any(String) } });
  });
});

describe('status-sync', () => {
  it('long-polls until the job is terminal', async () => {
    const { body } = await berth.post('/v2/sleep/run', { input: { ms: 1500 } });
    const t0 = Date.now();
    const res = await berth.json(`/v2/sleep/status-sync/${body.id}?wait=15000`);
    const elapsed = Date.now() - t0;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: body.id, status: 'COMPLETED', output: { slept: 1500 } });
    expect(elapsed).toBeGreaterThan(800);
    expect(elapsed).toBeLessThan(10_000);
  });

  it('answers with the current status when the wait elapses first', async () => {
    const { body } = await berth.post('/v2/sleep/run', { input: { ms: 10_000 } });
    const t0 = Date.now();
    const res = await berth.json(`/v2/sleep/status-sync/${body.id}?wait=1000`);
    const elapsed = Date.now() - t0;
    expect(res.status).toBe(200);
    expect(['IN_QUEUE', 'IN_PROGRESS']).toContain(res.body.status);
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(5_000);
    await berth.post(`/v2/sleep/cancel/${body.id}`);
  });
});

describe('SSE stream', () => {
  it('pushes each chunk as an event while the job runs, then a final "done" event with the job', async () => {
    const { body } = await berth.post('/v2/stream/run', { input: { chunks: 5, delayMs: 300 } });
    const res = await berth.fetch(`/v2/stream/stream/${body.id}`, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const isFinal = (e: SseEvent) => TERMINAL.includes(String((JSON.parse(e.data) as { status?: unknown }).status));
    const events = await readSse(res, isFinal);

    const chunks = events.slice(0, -1);
    const expected = Array.from({ length: 5 }, (_, i) => ({ index: i, text: `chunk ${i}` }));
    expect(chunks.map((e) => JSON.parse(e.data))).toEqual(expected.map((output) => ({ output })));
    const final = events.at(-1)!;
    expect(final.event).toBe('done');
    expect(JSON.parse(final.data)).toMatchObject({ id: body.id, status: 'COMPLETED', output: expected });
    // Incremental: chunks arrive as produced (4 gaps of 300 ms), not all at the end.
    expect(final.at - chunks[0]!.at).toBeGreaterThan(800);
    expect(chunks[4]!.at - chunks[3]!.at).toBeGreaterThan(150);
  });

  it('a running job whose handler does not stream: 400 stream_not_supported', async () => {
    const { body } = await berth.post('/v2/sleep/run', { input: { ms: 5_000 } });
    const res = await berth.json(`/v2/sleep/stream/${body.id}`);
    expect(res).toMatchObject({ status: 400, body: { code: 'stream_not_supported' } });
    await berth.post(`/v2/sleep/cancel/${body.id}`);
  });
});

describe('time limits', () => {
  it('ttl: the job is deleted when its ttl elapses, even while running (status 404)', async () => {
    const t0 = Date.now();
    const { body } = await berth.post('/v2/sleep/run', { input: { ms: 60_000 }, policy: { ttl: 10_000 } });
    await waitForStatus('sleep', body.id, 'IN_PROGRESS');
    const gone = await pollUntil(
      () => status('sleep', body.id),
      (r) => r.status === 404,
      16_000,
      250,
    );
    expect(Date.now() - t0).toBeGreaterThanOrEqual(9_500);
    expect(gone.body).toMatchObject({ code: 'job_not_found' });
    // The running handler was stopped.
    await berth.waitForLine(new RegExp(`aborted after .*jobId=${body.id}`), 5_000);
  }, 30_000);

  it('executionTimeout: TIMED_OUT after the limit, the handler sees the abort, and the job is retryable', async () => {
    const { body } = await berth.post('/v2/sleep/run', { input: { ms: 60_000 }, policy: { executionTimeout: 5_000 } });
    await waitForStatus('sleep', body.id, 'IN_PROGRESS');
    const started = Date.now();
    const timedOut = await waitForStatus('sleep', body.id, 'TIMED_OUT', 12_000);
    expect(Date.now() - started).toBeGreaterThan(3_500);
    expect(timedOut.body.executionTime).toBeGreaterThanOrEqual(4_500);
    await berth.waitForLine(new RegExp(`aborted after .*jobId=${body.id}`), 5_000);
    const retry = await berth.post(`/v2/sleep/retry/${body.id}`);
    expect(retry).toMatchObject({ status: 200, body: { id: body.id, status: 'IN_QUEUE' } });
    await berth.post(`/v2/sleep/cancel/${body.id}`);
  }, 30_000);
});

describe('payload limits', () => {
  const body = (mb: number) => JSON.stringify({ input: { blob: 'x'.repeat(mb * 1024 * 1024) } });

  it('11 MB on /run: 413 payload_too_large', async () => {
    const res = await berth.json('/v2/echo/run', { method: 'POST', body: body(11) });
    expect(res).toMatchObject({ status: 413, body: { code: 'payload_too_large' } });
  });

  it('11 MB on /runsync is accepted and echoed back', async () => {
    const res = await berth.json('/v2/echo/runsync', { method: 'POST', body: body(11) });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('COMPLETED');
    expect(res.body.output.blob).toHaveLength(11 * 1024 * 1024);
  });

  it('21 MB on /runsync: 413 payload_too_large', async () => {
    const res = await berth.json('/v2/echo/runsync', { method: 'POST', body: body(21) });
    expect(res).toMatchObject({ status: 413, body: { code: 'payload_too_large' } });
  });
});

describe('auth and routing', () => {
  it('no Authorization header: 401 unauthorized', async () => {
    const res = await berth.json('/v2/echo/health', { auth: false });
    expect(res).toMatchObject({ status: 401, body: { code: 'unauthorized', error: expect.any(String) } });
  });

  it('wrong key: 401 unauthorized', async () => {
    const res = await berth.json('/v2/echo/health', { headers: { authorization: 'Bearer nope' } });
    expect(res).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
  });

  it('the bare key without "Bearer" works (the docs\' curl form)', async () => {
    const res = await berth.json('/v2/echo/health', { headers: { authorization: berth.apiKey } });
    expect(res.status).toBe(200);
    const run = await berth.json('/v2/echo/runsync', {
      method: 'POST',
      headers: { authorization: berth.apiKey },
      body: JSON.stringify({ input: { k: 1 } }),
    });
    expect(run.body).toMatchObject({ status: 'COMPLETED', output: { k: 1 } });
  });

  it('unknown endpoint: 404 endpoint_not_found', async () => {
    expect(await berth.post('/v2/no-such-endpoint/run', { input: {} })).toMatchObject({
      status: 404,
      body: { code: 'endpoint_not_found' },
    });
    expect(await berth.json('/v2/no-such-endpoint/health')).toMatchObject({
      status: 404,
      body: { code: 'endpoint_not_found' },
    });
  });

  it('unknown job: 404 job_not_found', async () => {
    expect(await status('echo', '00000000-0000-4000-8000-000000000000-u1')).toMatchObject({
      status: 404,
      body: { code: 'job_not_found' },
    });
  });

  it('bad bodies: 400 invalid_json / invalid_request', async () => {
    expect(await berth.json('/v2/echo/run', { method: 'POST', body: '{not json' })).toMatchObject({
      status: 400,
      body: { code: 'invalid_json' },
    });
    expect(await berth.post('/v2/echo/run', { input: 'text' })).toMatchObject({
      status: 400,
      body: { code: 'invalid_request' },
    });
    expect(await berth.post('/v2/echo/runsync?wait=10', { input: {} })).toMatchObject({
      status: 400,
      body: { code: 'invalid_wait' },
    });
  });
});

describe('cancel', () => {
  it('a queued job is removed before it starts; cancelling a finished job changes nothing', async () => {
    // Fill the sleep worker (concurrency 2), then queue one more and cancel it.
    const busy = await Promise.all([0, 1].map(() => berth.post('/v2/sleep/run', { input: { ms: 20_000 } })));
    const queued = await berth.post('/v2/sleep/run', { input: { ms: 20_000 } });
    for (const b of busy) await waitForStatus('sleep', b.body.id, 'IN_PROGRESS');
    expect((await status('sleep', queued.body.id)).body.status).toBe('IN_QUEUE');
    expect(await berth.post(`/v2/sleep/cancel/${queued.body.id}`)).toMatchObject({
      status: 200,
      body: { id: queued.body.id, status: 'CANCELLED' },
    });
    for (const b of busy) await berth.post(`/v2/sleep/cancel/${b.body.id}`);
    // It never ran: no workerId, no delayTime.
    const after = await status('sleep', queued.body.id);
    expect(after.body.status).toBe('CANCELLED');
    expect(after.body.workerId).toBeUndefined();

    const done = await berth.post('/v2/echo/runsync', { input: {} });
    expect(await berth.post(`/v2/echo/cancel/${done.body.id}`)).toMatchObject({
      status: 200,
      body: { id: done.body.id, status: 'COMPLETED' },
    });
  });
});
