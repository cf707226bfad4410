import { JOB_ID_RE } from '@berth/protocol';
import { describe, expect, it } from 'vitest';
import { API_KEY, call, testServer } from '../testing.test-helpers.js';

describe('HTTP API without a socket', () => {
  it('POST /run stores the job and answers {id, status: IN_QUEUE}', async () => {
    const s = testServer();
    const r = await call(s, 'POST', '/v2/echo/run', { body: { input: { a: 1 } } });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('IN_QUEUE');
    expect(r.body.id).toMatch(JOB_ID_RE);
    expect(r.body.id.startsWith('sync-')).toBe(false);
    const st = await call(s, 'GET', `/v2/echo/status/${r.body.id}`);
    expect(st.body).toEqual({ id: r.body.id, status: 'IN_QUEUE', queuePosition: 0, waitingFor: 'no_worker' });
    const post = await call(s, 'POST', `/v2/echo/status/${r.body.id}`);
    expect(post.status).toBe(200);
  });

  it('accepts the bare key and the Bearer form, in any header case', async () => {
    const s = testServer();
    expect((await call(s, 'GET', '/v2/echo/health', { headers: { authorization: API_KEY } })).status).toBe(200);
    expect((await call(s, 'GET', '/v2/echo/health', { headers: { authorization: `bearer ${API_KEY}` } })).status).toBe(
      200,
    );
  });

  const errorCases: [
    string,
    string,
    string,
    { body?: unknown; raw?: string; headers?: Record<string, string> },
    number,
    string,
  ][] = [
    ['no key', 'GET', '/v2/echo/health', { headers: { authorization: '' } }, 401, 'unauthorized'],
    ['wrong key', 'GET', '/v2/echo/health', { headers: { authorization: 'Bearer nope' } }, 401, 'unauthorized'],
    ['unknown endpoint', 'GET', '/v2/nope/health', {}, 404, 'endpoint_not_found'],
    ['invalid endpoint id', 'GET', '/v2/NOPE!/health', {}, 404, 'endpoint_not_found'],
    ['unknown operation', 'GET', '/v2/echo/explode', {}, 404, 'route_not_found'],
    ['prototype operation', 'GET', '/v2/echo/constructor', {}, 404, 'route_not_found'],
    ['not under /v2', 'GET', '/v1/echo/run', {}, 404, 'route_not_found'],
    ['status without id', 'GET', '/v2/echo/status', {}, 404, 'route_not_found'],
    ['run with id', 'POST', '/v2/echo/run/abc', { body: { input: {} } }, 404, 'route_not_found'],
    ['GET /run', 'GET', '/v2/echo/run', {}, 405, 'method_not_allowed'],
    ['DELETE status', 'DELETE', '/v2/echo/status/x', {}, 405, 'method_not_allowed'],
    ['GET cancel', 'GET', '/v2/echo/cancel/x', {}, 405, 'method_not_allowed'],
    ['POST health', 'POST', '/v2/echo/health', {}, 405, 'method_not_allowed'],
    ['unknown job', 'GET', '/v2/echo/status/nope', {}, 404, 'job_not_found'],
    ['cancel unknown job', 'POST', '/v2/echo/cancel/nope', {}, 404, 'job_not_found'],
    ['retry unknown job', 'POST', '/v2/echo/retry/nope', {}, 404, 'job_not_found'],
    ['empty body', 'POST', '/v2/echo/run', { raw: '' }, 400, 'invalid_json'],
    ['bad json', 'POST', '/v2/echo/run', { raw: '{"input":' }, 400, 'invalid_json'],
    ['json array', 'POST', '/v2/echo/run', { raw: '[1,2]' }, 400, 'invalid_request'],
    ['json string', 'POST', '/v2/echo/run', { raw: '"hi"' }, 400, 'invalid_request'],
    ['no input', 'POST', '/v2/echo/run', { body: { prompt: 'x' } }, 400, 'invalid_request'],
    ['input array', 'POST', '/v2/echo/run', { body: { input: [1] } }, 400, 'invalid_request'],
    ['input null', 'POST', '/v2/echo/run', { body: { input: null } }, 400, 'invalid_request'],
    ['input string', 'POST', '/v2/echo/runsync', { body: { input: 'x' } }, 400, 'invalid_request'],
    ['ttl too small', 'POST', '/v2/echo/run', { body: { input: {}, policy: { ttl: 5 } } }, 400, 'invalid_request'],
    [
      'ttl too large',
      'POST',
      '/v2/echo/run',
      { body: { input: {}, policy: { ttl: 8 * 24 * 3600_000 } } },
      400,
      'invalid_request',
    ],
    [
      'executionTimeout string',
      'POST',
      '/v2/echo/run',
      { body: { input: {}, policy: { executionTimeout: '60' } } },
      400,
      'invalid_request',
    ],
    [
      'unknown policy key',
      'POST',
      '/v2/echo/run',
      { body: { input: {}, policy: { ttlx: 1 } } },
      400,
      'invalid_request',
    ],
    ['webhook ftp', 'POST', '/v2/echo/run', { body: { input: {}, webhook: 'ftp://x' } }, 400, 'invalid_request'],
    ['webhook not url', 'POST', '/v2/echo/run', { body: { input: {}, webhook: 'hello' } }, 400, 'invalid_request'],
    [
      's3Config incomplete',
      'POST',
      '/v2/echo/run',
      { body: { input: {}, s3Config: { accessId: 'a' } } },
      400,
      'invalid_request',
    ],
    ['wait too small', 'POST', '/v2/echo/runsync?wait=999', { body: { input: {} } }, 400, 'invalid_wait'],
    ['wait too large', 'POST', '/v2/echo/runsync?wait=300001', { body: { input: {} } }, 400, 'invalid_wait'],
    ['wait not a number', 'POST', '/v2/echo/runsync?wait=abc', { body: { input: {} } }, 400, 'invalid_wait'],
    ['wait negative', 'POST', '/v2/echo/runsync?wait=-5', { body: { input: {} } }, 400, 'invalid_wait'],
    ['status ttl too small', 'GET', '/v2/echo/status/x?ttl=10', {}, 400, 'invalid_ttl'],
    ['status ttl fractional', 'GET', '/v2/echo/status/x?ttl=10000.5', {}, 400, 'invalid_ttl'],
    [
      'deep json',
      'POST',
      '/v2/echo/run',
      { raw: `{"input":${'['.repeat(100)}${']'.repeat(100)}}` },
      400,
      'invalid_json',
    ],
  ];
  it.each(errorCases)('%s -> %i %s', async (_name, method, path, init, status, code) => {
    const s = testServer();
    const r = await call(s, method, path, init);
    expect(r.status).toBe(status);
    expect(r.body.code).toBe(code);
    expect(typeof r.body.error).toBe('string');
    expect(r.body.error.length).toBeGreaterThan(5);
  });

  it('405 carries an Allow header', async () => {
    const r = await call(testServer(), 'GET', '/v2/echo/run');
    expect(r.headers['allow']).toBe('POST');
  });

  it('ignores unknown top-level keys such as webhookV2 and never echoes s3Config', async () => {
    const s = testServer();
    const s3Config = { accessId: 'a', accessSecret: 'secret!', bucketName: 'b', endpointUrl: 'http://127.0.0.1:9000' };
    const r = await call(s, 'POST', '/v2/echo/run', { body: { input: {}, webhookV2: 'x', s3Config } });
    expect(r.status).toBe(200);
    const st = await call(s, 'GET', `/v2/echo/status/${r.body.id}`);
    expect(JSON.stringify(st.body)).not.toContain('secret!');
  });

  it('keeps __proto__ keys as plain data and pollutes nothing', async () => {
    const s = testServer();
    const raw =
      '{"input":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}},"__proto__":{"polluted":true}}';
    const r = await call(s, 'POST', '/v2/echo/run', { raw });
    expect(r.status).toBe(200);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    const job = await s.options.store.get(r.body.id);
    expect(Object.getPrototypeOf(job!.input)).toBe(Object.prototype);
    expect(Object.hasOwn(job!.input, '__proto__')).toBe(true);
  });

  it('counts the body while reading: 413 past 10 MB on /run even without Content-Length', async () => {
    const s = testServer();
    async function* chunks() {
      const mb = new Uint8Array(1024 * 1024).fill(32);
      for (let i = 0; i < 11; i++) yield mb;
    }
    const res = await s.handle({
      method: 'POST',
      path: '/v2/echo/run',
      query: new URLSearchParams(),
      headers: { authorization: API_KEY },
      body: chunks(),
    });
    expect(res.status).toBe(413);
    expect('json' in res && (res.json as { code: string }).code).toBe('payload_too_large');
  });

  it('refuses a declared Content-Length over the limit before reading', async () => {
    const s = testServer();
    const res = await s.handle({
      method: 'POST',
      path: '/v2/echo/runsync',
      query: new URLSearchParams(),
      headers: { authorization: API_KEY, 'content-length': String(21 * 1024 * 1024) },
      body: '{}',
    });
    expect(res.status).toBe(413);
  });

  it('cancels a queued job: CANCELLED, never dispatched, and cancel again answers it unchanged', async () => {
    const s = testServer();
    const { body } = await call(s, 'POST', '/v2/echo/run', { body: { input: {} } });
    const c = await call(s, 'POST', `/v2/echo/cancel/${body.id}`, { body: {} });
    expect(c.body).toMatchObject({ id: body.id, status: 'CANCELLED' });
    const again = await call(s, 'POST', `/v2/echo/cancel/${body.id}`);
    expect(again.body.status).toBe('CANCELLED');
    expect(await s.options.store.queueDepth('echo')).toBe(0);
  });

  it('retry of a job that is not FAILED or TIMED_OUT is 409 job_not_retryable', async () => {
    const s = testServer();
    const { body } = await call(s, 'POST', '/v2/echo/run', { body: { input: {} } });
    const r = await call(s, 'POST', `/v2/echo/retry/${body.id}`);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('job_not_retryable');
  });

  it('purge-queue removes queued jobs only and reports the count; health counts them', async () => {
    const s = testServer();
    for (let i = 0; i < 3; i++) await call(s, 'POST', '/v2/echo/run', { body: { input: { i } } });
    expect((await call(s, 'GET', '/v2/echo/health')).body.jobs.inQueue).toBe(3);
    const p = await call(s, 'POST', '/v2/echo/purge-queue', { body: {} });
    expect(p.body).toEqual({ removed: 3, status: 'completed' });
    const h = await call(s, 'GET', '/v2/echo/health');
    expect(h.body).toEqual({
      jobs: { completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 },
      workers: { idle: 0, initializing: 0, ready: 0, running: 0, throttled: 0, unhealthy: 0 },
    });
  });

  it('health reports expected-but-unconnected workers as initializing', async () => {
    const s = testServer();
    s.workers.setExpected('echo', 2);
    expect((await call(s, 'GET', '/v2/echo/health')).body.workers.initializing).toBe(2);
  });

  it('runsync without workers answers the queued job when the wait elapses', async () => {
    const s = testServer();
    const t0 = Date.now();
    const r = await call(s, 'POST', '/v2/echo/runsync?wait=1000', { body: { input: {} } });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(990);
    expect(r.body.status).toBe('IN_QUEUE');
    expect(r.body.id.startsWith('sync-')).toBe(true);
    expect(r.body.id).toMatch(JOB_ID_RE);
  });

  it('/ping answers without a key; everything answers 503 while draining', async () => {
    const s = testServer();
    expect((await call(s, 'GET', '/ping', { headers: { authorization: '' } })).status).toBe(200);
    await s.close({ drainMs: 0 });
    const r = await call(s, 'POST', '/v2/echo/run', { body: { input: {} } });
    expect(r.status).toBe(503);
    expect(r.body.code).toBe('unavailable');
  });
});
