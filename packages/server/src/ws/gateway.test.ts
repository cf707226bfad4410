import { PROTOCOL_VERSION, WORKER_WS_PATH } from '@berth/protocol';
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { ScriptedWorker, call, listening, testServer, until, untilStatus } from '../testing.test-helpers.js';

describe('worker gateway', () => {
  it('refuses a wrong or missing token with 401 before the upgrade, and a wrong path with 404', async () => {
    await using t = await listening();
    await expect(ScriptedWorker.connect(t.url, {}, 'bad-token')).rejects.toThrow('HTTP 401');
    // The refusal carries the same JSON error body as every HTTP answer.
    const refusal = (ws: WebSocket) =>
      new Promise<{ status: number | undefined; body: unknown }>((resolve) =>
        ws.once('unexpected-response', (_q, res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(text) }));
        }),
      );
    const noAuth = await refusal(new WebSocket(t.url.replace('http', 'ws') + WORKER_WS_PATH));
    expect(noAuth).toEqual({ status: 401, body: { error: 'Unauthorized', code: 'unauthorized' } });
    const wrongPath = await refusal(new WebSocket(`${t.url.replace('http', 'ws')}/v2/other`));
    expect(wrongPath).toMatchObject({ status: 404, body: { code: 'route_not_found' } }); // served as plain HTTP (http/plain-upgrade.ts)
  });

  it('refuses a protocol version mismatch with a coded error and closes', async () => {
    await using t = await listening();
    const w = await ScriptedWorker.connect(t.url, { protocol: PROTOCOL_VERSION + 1 });
    expect(await w.next('error')).toMatchObject({ code: 'protocol_mismatch' });
    await until(() => w.closed);
  });

  it('requires hello first', async () => {
    await using t = await listening();
    const ws = new WebSocket(t.url.replace('http', 'ws') + WORKER_WS_PATH, {
      headers: { authorization: 'Bearer test-worker-token' },
    });
    await new Promise((r) => ws.once('open', r));
    const msgs: string[] = [];
    ws.on('message', (d) => msgs.push(d.toString()));
    ws.send(JSON.stringify({ type: 'ping', t: 1 }));
    await new Promise((r) => ws.once('close', r));
    expect(msgs.join()).toContain('invalid_message');
  });

  it('survives malformed messages: answers a coded error and keeps the worker', async () => {
    await using t = await listening();
    const w = await ScriptedWorker.connect(t.url);
    await w.next('welcome');
    for (const bad of [
      'not json',
      '{}',
      '[]',
      'null',
      '{"type":"job.complete"}',
      '{"type":"hello","protocol":"x"}',
      '{"type":"job.stream","id":"a","attempt":1,"seq":-1,"chunks":[]}',
      '"'.repeat(10_000),
    ]) {
      w.ws.send(bad);
    }
    w.ws.send(Buffer.from([0xff, 0x00, 0x12]), { binary: true });
    await until(() => w.count('error') >= 9);
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    expect((await w.next('job.assign')).id).toBe(id);
    expect((await call(t.server, 'GET', '/v2/echo/health')).status).toBe(200);
    await w.close();
  });

  it('answers pings with pongs and pings workers itself', async () => {
    await using t = await listening({ heartbeatMs: 50 });
    const w = await ScriptedWorker.connect(t.url);
    w.send({ type: 'ping', t: 42 });
    expect(await w.next('pong')).toEqual({ type: 'pong', t: 42 });
    await w.next('ping', 1000);
    await w.close();
  });

  it('drops a silent worker after 3 heartbeats; its job is requeued after the grace period', async () => {
    const clock = new ManualClock();
    await using t = await listening({ heartbeatMs: 40, clock, workerGraceMs: 5000 });
    const w = await ScriptedWorker.connect(t.url);
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    await w.next('job.assign');
    // the worker says nothing more: within ~3-4 heartbeats the server closes the socket
    await until(() => w.closed, 2000, 'server to drop the silent worker');
    expect((await call(t.server, 'GET', `/v2/echo/status/${id}`)).body.status).toBe('IN_PROGRESS');
    clock.advance(5001);
    expect((await t.server.sweep()).requeued).toBe(1);
    const s = (await call(t.server, 'GET', `/v2/echo/status/${id}`)).body;
    expect(s).toMatchObject({ status: 'IN_QUEUE', retries: 1 });
    const w2 = await ScriptedWorker.connect(t.url, { workerId: 'w2' });
    expect(await w2.next('job.assign')).toMatchObject({ id, attempt: 2 });
    // a late result from the dropped attempt is refused
    w2.send({ type: 'job.complete', id, attempt: 1, output: 'stale' });
    w2.send({ type: 'job.complete', id, attempt: 2, output: 'fresh' });
    await untilStatus(t.server, 'echo', id, 'COMPLETED');
    expect((await call(t.server, 'GET', `/v2/echo/status/${id}`)).body.output).toBe('fresh');
    await w2.close();
  });

  it('a reconnecting worker re-announcing its job keeps it (no requeue) and its result counts', async () => {
    await using t = await listening({ workerGraceMs: 60_000 });
    const w = await ScriptedWorker.connect(t.url);
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    await w.next('job.assign');
    await w.close();
    const w2 = await ScriptedWorker.connect(t.url, {
      inflight: [
        { id, attempt: 1 },
        { id: 'gone', attempt: 3 },
      ],
    });
    const welcome = await w2.next('welcome');
    expect(welcome.stale).toEqual([{ id: 'gone', attempt: 3 }]);
    w2.send({ type: 'job.complete', id, attempt: 1, output: 'kept' });
    await untilStatus(t.server, 'echo', id, 'COMPLETED');
    const s = (await call(t.server, 'GET', `/v2/echo/status/${id}`)).body;
    expect(s.retries).toBeUndefined();
    await w2.close();
  });

  it('acknowledges every result once stored, a stale one too, and a re-sent result after the job ended', async () => {
    await using t = await listening({ workerGraceMs: 60_000 });
    const w = await ScriptedWorker.connect(t.url, { concurrency: 2 });
    expect((await w.next('welcome')).acks).toBe(true);
    const a = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    const b = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    await w.next('job.assign');
    await w.next('job.assign');
    w.send({ type: 'job.complete', id: a, attempt: 1, output: 1 });
    expect(await w.next('job.ack')).toEqual({ type: 'job.ack', id: a, attempt: 1 });
    expect((await call(t.server, 'GET', `/v2/echo/status/${a}`)).body.status).toBe('COMPLETED'); // stored before the ack
    w.send({ type: 'job.fail', id: b, attempt: 1, error: 'boom' });
    expect(await w.next('job.ack')).toEqual({ type: 'job.ack', id: b, attempt: 1 });
    // The same result again (a worker that never saw the ack re-sends it after a reconnect): acknowledged, not applied twice.
    w.send({ type: 'job.complete', id: a, attempt: 1, output: 'again' });
    expect(await w.next('job.ack')).toEqual({ type: 'job.ack', id: a, attempt: 1 });
    expect((await call(t.server, 'GET', `/v2/echo/status/${a}`)).body.output).toBe(1);
    await w.close();
  });

  it('a restarted worker (same id, nothing in flight) gets its old jobs requeued at once', async () => {
    await using t = await listening({ workerGraceMs: 60_000 });
    const w = await ScriptedWorker.connect(t.url);
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    await w.next('job.assign');
    w.ws.terminate();
    await until(() => w.closed);
    const w2 = await ScriptedWorker.connect(t.url);
    expect(await w2.next('job.assign')).toMatchObject({ id, attempt: 2 });
    await w2.close();
  });

  it('fails a job "worker lost" once it reaches maxAttempts', async () => {
    await using t = await listening({ workerGraceMs: 0, maxAttempts: 2 });
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    for (let i = 1; i <= 2; i++) {
      const w = await ScriptedWorker.connect(t.url, { workerId: `w${i}` });
      expect((await w.next('job.assign')).attempt).toBe(i);
      w.ws.terminate();
      await until(() => w.closed);
    }
    const s = await untilStatus(t.server, 'echo', id, 'FAILED');
    expect(s.error).toContain('worker lost');
  });

  it('registers the endpoint a worker announces only when acceptWorkerEndpoints allows it (off by default)', async () => {
    await using t = await listening({ acceptWorkerEndpoints: true });
    const w = await ScriptedWorker.connect(t.url, { endpointId: 'fresh' });
    await w.next('welcome');
    expect((await call(t.server, 'GET', '/v2/fresh/health')).status).toBe(200);
    await w.close();
    await using t2 = await listening();
    const w2 = await ScriptedWorker.connect(t2.url, { endpointId: 'fresh' });
    expect(await w2.next('error')).toMatchObject({ code: 'unknown_endpoint' });
  });

  it('close() tells workers to drain and answers 503 afterwards', async () => {
    const t = await listening();
    const w = await ScriptedWorker.connect(t.url);
    await w.next('welcome');
    const closing = t.server.close({ drainMs: 200 });
    expect(await w.next('drain')).toMatchObject({ type: 'drain' });
    await closing;
    await until(() => w.closed);
  });
});

describe('graceful close', () => {
  it('waits for running jobs up to drainMs while answering 503, then closes', async () => {
    const t = await listening();
    const w = await ScriptedWorker.connect(t.url);
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    await w.next('job.assign');
    let closed = false;
    const closing = t.server.close({ drainMs: 5000 }).then(() => (closed = true));
    await w.next('drain');
    const during = await fetch(`${t.url}/v2/echo/status/${id}`, { headers: { authorization: 'Bearer test-key' } });
    expect(during.status).toBe(503);
    expect(closed).toBe(false);
    w.send({ type: 'job.complete', id, attempt: 1, output: 'done in time' });
    await closing;
    expect((await t.server.options.store.get(id))?.status).toBe('COMPLETED');
  });

  it('gives up on running jobs at drainMs', async () => {
    const t = await listening();
    const w = await ScriptedWorker.connect(t.url);
    await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } });
    await w.next('job.assign');
    const t0 = Date.now();
    await t.server.close({ drainMs: 300 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    await until(() => w.closed);
  });

  it('settles close() after a listen that failed', async () => {
    const a = testServer();
    const { port } = await a.listen({ port: 0 });
    const b = testServer();
    await expect(b.listen({ port })).rejects.toThrow();
    await b.close({ drainMs: 0 });
    await a.close({ drainMs: 0 });
  });
});
