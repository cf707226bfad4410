import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../keys/create-key.js';
import { MemoryKeyStore } from '../keys/key-store.js';
import { API_KEY, ScriptedWorker, call, listening, until } from '../testing.test-helpers.js';

const as = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } });

// Issue #16 items 4, 5, 6, 8, 10: every scope applies to every effect, upgrades only on the worker path, finite
// numbers only, /stream never hands chunks to a reader that has gone.
describe('trust edges', () => {
  it('a read-only key cannot change ttl (/status and /status-sync): 403 key_read_only, the job keeps its lifespan', async () => {
    const keyStore = new MemoryKeyStore();
    await using t = await listening({ keyStore });
    const ro = (await createApiKey(keyStore, { readOnly: true })).secret;
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    const before = (await t.server.options.store.get(id))?.expiresAt;
    for (const p of [`/v2/echo/status/${id}?ttl=10000`, `/v2/echo/status-sync/${id}?ttl=10000&wait=1000`]) {
      const r = await call(t.server, 'GET', p, as(ro));
      expect(r.status, p).toBe(403);
      expect(r.body.code).toBe('key_read_only');
    }
    expect((await t.server.options.store.get(id))?.expiresAt).toBe(before);
    expect((await call(t.server, 'GET', `/v2/echo/status/${id}`, as(ro))).status).toBe(200); // reading still works
    expect((await call(t.server, 'GET', `/v2/echo/status/${id}?ttl=10000`)).status).toBe(200); // a full key may
    expect((await t.server.options.store.get(id))?.expiresAt).not.toBe(before);
  });

  it('/metrics shows a key limited to some endpoints only their lines', async () => {
    const keyStore = new MemoryKeyStore();
    await using t = await listening({ keyStore, endpoints: ['echo', 'secret-ep'] });
    const scoped = (await createApiKey(keyStore, { endpoints: ['echo'] })).secret;
    await call(t.server, 'POST', '/v2/secret-ep/run', { body: { input: {} } });
    const scrape = async (key: string) =>
      (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${key}` } })).text();
    const full = await scrape(API_KEY);
    expect(full).toContain('berth_queue_depth{endpoint="secret-ep"} 1');
    const mine = await scrape(scoped);
    expect(mine).toContain('berth_queue_depth{endpoint="echo"} 0');
    expect(mine).not.toContain('secret-ep');
    expect(mine).not.toContain('berth_webhook_attempts_total{'); // process-wide, not per endpoint
  });

  it('an upgrade offer on an API route is served as plain HTTP/1.1, and the connection stays usable (keep-alive)', async () => {
    await using t = await listening();
    const s = connect(t.port, '127.0.0.1');
    await new Promise((r) => s.once('connect', r));
    let got = '';
    s.on('data', (d) => (got += d.toString('latin1')));
    const req = (path: string) =>
      `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n`;
    s.write(req('/v2/echo/health'));
    await until(() => got.includes('"workers"'));
    s.write(req('/ping'));
    await until(() => got.includes('{"status":"ok"}'));
    expect(got.match(/HTTP\/1\.1 200/g)?.length).toBe(2);
    s.destroy();
  });

  it('a non-finite number is refused with a message naming the field', async () => {
    await using t = await listening();
    const r = await fetch(`${t.url}/v2/echo/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}` },
      body: '{"input": {"a": 1, "deep": {"list": [0, -1e400]}}}',
    });
    expect(r.status).toBe(400);
    const body = (await r.json()) as { code: string; error: string };
    expect(body.code).toBe('invalid_request');
    expect(body.error).toMatch(/^input\.deep\.list\[1\]: number out of range/);
  });

  it('/stream answers within 5 s by default, under the 10 s read timeout of common clients', {
    timeout: 15_000,
  }, async () => {
    await using t = await listening();
    const w = await ScriptedWorker.connect(t.url);
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    await w.next('job.assign');
    const t0 = performance.now();
    const r = await fetch(`${t.url}/v2/echo/stream/${id}`, {
      headers: { authorization: `Bearer ${API_KEY}` },
      signal: AbortSignal.timeout(10_000),
    });
    expect(await r.json()).toEqual({ id, status: 'IN_PROGRESS', stream: [] });
    const ms = performance.now() - t0;
    expect(ms).toBeGreaterThan(4500);
    expect(ms).toBeLessThan(7000);
    await w.close();
  });

  it('a /stream request whose client has gone does not consume the chunks: the next reader gets them', async () => {
    await using t = await listening();
    const w = await ScriptedWorker.connect(t.url);
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    await w.next('job.assign');
    w.send({ type: 'job.stream', id, attempt: 1, seq: 0, chunks: ['a', 'b'] });
    w.send({ type: 'ping', t: 1 });
    await w.next('pong'); // a worker's messages are applied in order: the chunks are stored
    const gone = new AbortController();
    gone.abort();
    const path = `/v2/echo/stream/${id}`;
    const r = await t.server.handle({
      method: 'GET',
      path,
      query: new URLSearchParams(),
      headers: { authorization: `Bearer ${API_KEY}` },
      signal: gone.signal,
    });
    expect('json' in r && r.json).toMatchObject({ stream: [] });
    expect((await call(t.server, 'GET', `${path}?wait=0`)).body.stream).toEqual([{ output: 'a' }, { output: 'b' }]);
    await w.close();
  });
});
