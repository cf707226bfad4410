// Job tokens over real sockets: issued on /run and /runsync, accepted only on their job's read routes (and
// /cancel when granted), refused after expiry (manual clock), on other jobs, endpoints and routes; verified by
// another server sharing the secret (and by a second replica on the same PostgreSQL schema).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { MemoryKeyStore } from '../keys/key-store.js';
import { createApiKey } from '../keys/create-key.js';
import { API_KEY, ScriptedWorker, bodyReader, listening } from '../testing.test-helpers.js';
import { dropSchema, pgUnavailable, testSchema, PG_TEST_URL } from '../store/postgres/pg-test-db.test-helpers.js';
import { PgStore } from '../store/postgres/pg-store.js';
import { JobTokenSigner } from './job-token.js';

const SECRET = 'a-job-token-secret-for-tests';
type Listening = Awaited<ReturnType<typeof listening>>;

async function req(base: string, method: string, path: string, auth?: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: {
      ...(auth !== undefined ? { authorization: `Bearer ${auth}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
}

describe('job tokens', () => {
  const clock = new ManualClock(Date.now());
  let t: Listening;
  let w: ScriptedWorker;
  let a: { id: string; token: string };
  let b: { id: string; token: string };
  beforeAll(async () => {
    t = await listening({ clock, jobTokenSecret: SECRET, endpoints: ['echo', 'other'], heartbeatMs: 120_000 });
    w = await ScriptedWorker.connect(t.url, { concurrency: 20 });
    const ra = await req(t.url, 'POST', '/v2/echo/run', API_KEY, { input: { n: 1 }, token: { ttlSeconds: 60 } });
    const rb = await req(t.url, 'POST', '/v2/echo/run', API_KEY, { input: { n: 2 }, token: {} });
    expect(ra.status).toBe(200);
    a = { id: ra.body.id, token: ra.body.token };
    b = { id: rb.body.id, token: rb.body.token };
    await w.next('job.assign');
    await w.next('job.assign');
  });
  afterAll(async () => {
    await w.close();
    await t[Symbol.asyncDispose]();
  });

  it('/run answers an opaque berth_jt_ token only when asked', async () => {
    expect(a.token).toMatch(/^berth_jt_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    const plain = await req(t.url, 'POST', '/v2/echo/run', API_KEY, { input: {} });
    expect(plain.body).toEqual({ id: plain.body.id, status: 'IN_QUEUE' });
    await req(t.url, 'POST', `/v2/echo/cancel/${plain.body.id}`, API_KEY);
  });

  it('reads its job: status, status-sync, stream (JSON and SSE), logs', async () => {
    expect((await req(t.url, 'GET', `/v2/echo/status/${a.id}`, a.token)).body).toMatchObject({
      id: a.id,
      status: 'IN_PROGRESS',
    });
    expect((await req(t.url, 'POST', `/v2/echo/status/${a.id}`, a.token)).status).toBe(200);
    expect((await req(t.url, 'GET', `/v2/echo/status-sync/${a.id}?wait=1000`, a.token)).status).toBe(200);
    expect((await req(t.url, 'GET', `/v2/echo/logs/${a.id}`, a.token)).body).toMatchObject({ id: a.id, logs: [] });
    w.send({ type: 'job.stream', id: a.id, attempt: 1, seq: 0, chunks: ['one'] });
    const s = await req(t.url, 'GET', `/v2/echo/stream/${a.id}?wait=2000`, a.token);
    expect(s.body).toMatchObject({ id: a.id, stream: [{ output: 'one' }] });
    // SSE with the token in the query (EventSource cannot set headers), read by any origin.
    const ac = new AbortController();
    const res = await fetch(`${t.url}/v2/echo/stream/${a.id}?token=${a.token}`, {
      headers: { accept: 'text/event-stream', origin: 'http://elsewhere.test' },
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const r = bodyReader(res);
    w.send({ type: 'job.stream', id: a.id, attempt: 1, seq: 1, chunks: ['two'] });
    await r.until('"two"');
    ac.abort();
  });

  it('is refused with 403 job_token_not_allowed on another job, endpoint or route', async () => {
    const refusals: [string, string][] = [
      ['GET', `/v2/echo/status/${b.id}`],
      ['GET', `/v2/echo/stream/${b.id}`],
      ['GET', `/v2/other/status/${a.id}`],
      ['POST', `/v2/echo/cancel/${a.id}`], // not granted
      ['POST', `/v2/echo/retry/${a.id}`],
      ['GET', `/v2/echo/webhooks/${a.id}`],
      ['POST', '/v2/echo/run'],
      ['POST', '/v2/echo/runsync'],
      ['POST', '/v2/echo/purge-queue'],
      ['GET', '/v2/echo/health'],
      ['GET', '/v2/echo/jobs'],
      ['GET', '/metrics'],
      ['GET', '/openapi.json'],
      ['GET', '/v2/_berth/catalog'],
      ['GET', `/v2/echo/status/${a.id}?ttl=60000`], // a write riding on a read
    ];
    for (const [method, path] of refusals) {
      const r = await req(t.url, method, path, a.token, method === 'POST' ? { input: {} } : undefined);
      expect({ path, status: r.status, code: r.body.code }).toEqual({
        path,
        status: 403,
        code: 'job_token_not_allowed',
      });
    }
    const oa = await req(t.url, 'GET', '/v2/echo/openai/v1/models', a.token);
    expect([oa.status, oa.body.error?.code]).toEqual([403, 'job_token_not_allowed']);
    expect((await req(t.url, 'GET', `/v2/echo/status/${a.id}`, API_KEY)).body.status).toBe('IN_PROGRESS');
  });

  it('takes ?token= on /stream only, and never an API key there', async () => {
    const onStatus = await req(t.url, 'GET', `/v2/echo/status/${a.id}?token=${a.token}`);
    expect([onStatus.status, onStatus.body.code]).toEqual([401, 'unauthorized']);
    const key = await req(t.url, 'GET', `/v2/echo/stream/${a.id}?wait=0&token=${API_KEY}`);
    expect([key.status, key.body.code]).toEqual([401, 'unauthorized']);
  });

  it('a tampered token or one signed with another secret is 401 unauthorized', async () => {
    const [payload, sig] = a.token.slice('berth_jt_'.length).split('.') as [string, string];
    const forged = JSON.parse(Buffer.from(payload, 'base64url').toString());
    forged[3] = b.id;
    const tampered = `berth_jt_${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${sig}`;
    const r1 = await req(t.url, 'GET', `/v2/echo/status/${b.id}`, tampered);
    expect([r1.status, r1.body.code]).toEqual([401, 'unauthorized']);
    const other = new JobTokenSigner('another-secret-entirely').sign({
      keyId: 'key1',
      keyFp: 'x',
      endpointId: 'echo',
      jobId: a.id,
      cancel: true,
      expiresAt: clock.now() + 60_000,
    });
    const r2 = await req(t.url, 'GET', `/v2/echo/status/${a.id}`, other);
    expect([r2.status, r2.body.code]).toEqual([401, 'unauthorized']);
    expect((await req(t.url, 'GET', `/v2/echo/status/${a.id}`, 'berth_jt_garbage')).status).toBe(401);
  });

  it('answers the CORS preflight of its routes and adds allow-origin to token answers only', async () => {
    const pre = await fetch(`${t.url}/v2/echo/status/${a.id}`, {
      method: 'OPTIONS',
      headers: { origin: 'http://elsewhere.test', 'access-control-request-headers': 'authorization' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')).toContain('authorization');
    const refused = await req(t.url, 'GET', `/v2/echo/status/${b.id}`, a.token);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    const withKey = await req(t.url, 'GET', `/v2/echo/status/${a.id}`, API_KEY);
    expect(withKey.headers.get('access-control-allow-origin')).toBeNull();
    expect((await fetch(`${t.url}/v2/echo/run`, { method: 'OPTIONS' })).status).not.toBe(204);
  });

  it('expires: accepted until ttlSeconds have passed on the server clock, then 401 job_token_expired', async () => {
    const c = await req(t.url, 'POST', '/v2/echo/run', API_KEY, { input: {}, token: { ttlSeconds: 30 } });
    clock.advance(29_999);
    expect((await req(t.url, 'GET', `/v2/echo/status/${c.body.id}`, c.body.token)).status).toBe(200);
    clock.advance(1);
    const r = await req(t.url, 'GET', `/v2/echo/status/${c.body.id}`, c.body.token);
    expect([r.status, r.body.code]).toEqual([401, 'job_token_expired']);
    const s = await fetch(`${t.url}/v2/echo/stream/${c.body.id}?token=${c.body.token}`, {
      headers: { accept: 'text/event-stream' },
    });
    expect(s.status).toBe(401);
    clock.advance(-30_000);
    await req(t.url, 'POST', `/v2/echo/cancel/${c.body.id}`, API_KEY);
  });

  it('POST /token/<id> issues a new token for a job that exists (when the page token expired mid-job); never to a token', async () => {
    const c = await req(t.url, 'POST', '/v2/echo/run', API_KEY, { input: {}, token: { ttlSeconds: 10 } });
    clock.advance(10_000);
    expect((await req(t.url, 'GET', `/v2/echo/status/${c.body.id}`, c.body.token)).status).toBe(401);
    const fresh = await req(t.url, 'POST', `/v2/echo/token/${c.body.id}?ttlSeconds=60`, API_KEY);
    expect(fresh.body).toEqual({ id: c.body.id, token: expect.stringMatching(/^berth_jt_/) });
    expect((await req(t.url, 'GET', `/v2/echo/status/${c.body.id}`, fresh.body.token)).status).toBe(200);
    expect((await req(t.url, 'POST', `/v2/echo/cancel/${c.body.id}`, fresh.body.token)).status).toBe(403);
    const byToken = await req(t.url, 'POST', `/v2/echo/token/${c.body.id}`, fresh.body.token);
    expect([byToken.status, byToken.body.code]).toEqual([403, 'job_token_not_allowed']);
    expect((await req(t.url, 'POST', '/v2/echo/token/nope', API_KEY)).body.code).toBe('job_not_found');
    for (const q of ['ttlSeconds=5', 'ttlSeconds=abc', 'cancel=yes'])
      expect((await req(t.url, 'POST', `/v2/echo/token/${c.body.id}?${q}`, API_KEY)).body.code).toBe('invalid_request');
    const canceller = await req(t.url, 'POST', `/v2/echo/token/${c.body.id}?cancel=true`, API_KEY);
    expect((await req(t.url, 'POST', `/v2/echo/cancel/${c.body.id}`, canceller.body.token)).status).toBe(200);
    clock.advance(-10_000);
  });

  it('cancels its job only when issued with cancel: true', async () => {
    const c = await req(t.url, 'POST', '/v2/echo/run', API_KEY, { input: {}, token: { cancel: true } });
    const d = await req(t.url, 'POST', '/v2/echo/run', API_KEY, { input: {} });
    expect((await req(t.url, 'POST', `/v2/echo/cancel/${d.body.id}`, c.body.token)).status).toBe(403);
    const r = await req(t.url, 'POST', `/v2/echo/cancel/${c.body.id}`, c.body.token);
    expect(r.body).toMatchObject({ id: c.body.id, status: 'CANCELLED' });
    expect((await req(t.url, 'POST', `/v2/echo/retry/${c.body.id}`, c.body.token)).status).toBe(403);
    await req(t.url, 'POST', `/v2/echo/cancel/${d.body.id}`, API_KEY);
  });

  it('/runsync answers the token with the job object; bad token requests are 400 invalid_request', async () => {
    const rs = req(t.url, 'POST', '/v2/echo/runsync?wait=5000', API_KEY, { input: { s: 1 }, token: {} });
    let as = await w.next('job.assign');
    while (as.input['s'] !== 1) as = await w.next('job.assign');
    w.send({ type: 'job.complete', id: as.id, attempt: as.attempt, output: 'done' });
    const r = await rs;
    expect(r.body).toMatchObject({ status: 'COMPLETED', output: 'done' });
    expect((await req(t.url, 'GET', `/v2/echo/status/${r.body.id}`, r.body.token)).body.output).toBe('done');
    for (const token of [{ ttlSeconds: 5 }, { ttlSeconds: 86_401 }, { ttlSeconds: 1.5 }, { cancel: 'yes' }, { x: 1 }]) {
      const bad = await req(t.url, 'POST', '/v2/echo/run', API_KEY, { input: {}, token });
      expect([bad.status, bad.body.code]).toEqual([400, 'invalid_request']);
    }
  });

  it("has a rate limit of its own, a tenth of its key's (at least 1), which leaves the key's untouched", async () => {
    await using s = await listening({ jobTokenSecret: SECRET, rateLimits: { base: { status: 3 }, perWorker: 0 } });
    const r = await req(s.url, 'POST', '/v2/echo/run', API_KEY, { input: {}, token: {} });
    for (let i = 0; i < 2; i++)
      expect((await req(s.url, 'GET', `/v2/echo/status/${r.body.id}`, API_KEY)).status).toBe(200);
    expect((await req(s.url, 'GET', `/v2/echo/status/${r.body.id}`, r.body.token)).status).toBe(200);
    const over = await req(s.url, 'GET', `/v2/echo/status/${r.body.id}`, r.body.token);
    expect([over.status, over.body.code]).toEqual([429, 'rate_limited']);
    expect((await req(s.url, 'GET', `/v2/echo/status/${r.body.id}`, API_KEY)).status).toBe(200);
  });

  it('dies with the revocation of the stored key that asked for it; another server with the same secret accepts it', async () => {
    const keyStore = new MemoryKeyStore();
    const stored = await createApiKey(keyStore, { name: 'app' });
    await using s = await listening({ jobTokenSecret: SECRET, keyStore });
    await using peer = await listening({ jobTokenSecret: SECRET, keyStore, store: s.server.options.store });
    const r = await req(s.url, 'POST', '/v2/echo/run', stored.secret, { input: {}, token: {} });
    expect((await req(peer.url, 'GET', `/v2/echo/status/${r.body.id}`, r.body.token)).status).toBe(200);
    // A read-only key may issue read tokens for its jobs, not cancelling ones.
    const reader = await createApiKey(keyStore, { name: 'reader', readOnly: true });
    const rt = await req(s.url, 'POST', `/v2/echo/token/${r.body.id}`, reader.secret);
    expect((await req(s.url, 'GET', `/v2/echo/status/${r.body.id}`, rt.body.token)).status).toBe(200);
    const rc = await req(s.url, 'POST', `/v2/echo/token/${r.body.id}?cancel=true`, reader.secret);
    expect([rc.status, rc.body.code]).toEqual([403, 'key_read_only']);
    await keyStore.revoke(stored.key.id, Date.now());
    const after = await req(s.url, 'GET', `/v2/echo/status/${r.body.id}`, r.body.token);
    expect([after.status, after.body.code]).toEqual([401, 'unauthorized']);
  });
});

const noPg = await pgUnavailable();
describe.skipIf(noPg !== undefined)(
  `job tokens across replicas on PostgreSQL${noPg ? ` (skipped: ${noPg})` : ''}`,
  () => {
    it('a token one replica issued is accepted by another with no secret configured (shared through the store)', async () => {
      const schema = testSchema();
      const open = () => PgStore.open({ url: PG_TEST_URL, poolSize: 2, schema });
      const [s1, s2] = [await open(), await open()];
      try {
        await using r1 = await listening({ store: s1 });
        await using r2 = await listening({ store: s2 });
        const r = await req(r1.url, 'POST', '/v2/echo/run', API_KEY, { input: {}, token: {} });
        const seen = await req(r2.url, 'GET', `/v2/echo/status/${r.body.id}`, r.body.token);
        expect(seen.body).toMatchObject({ id: r.body.id, status: 'IN_QUEUE' });
        const other = await req(r2.url, 'GET', '/v2/echo/status/nope', r.body.token);
        expect([other.status, other.body.code]).toEqual([403, 'job_token_not_allowed']);
      } finally {
        await dropSchema(schema);
      }
    });
  },
);
