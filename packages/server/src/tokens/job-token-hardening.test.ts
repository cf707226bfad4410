// Issue #36, job tokens, over real sockets: a token's own rate-limit bucket (its reads never lock its key out), one
// spelling per token, the issuing key checked on every use (rotated, revoked, narrowed), /stream closed when the
// token ends, and token reads of /stream that take nothing from the backend's reader.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { MemoryKeyStore, type StoredKey } from '../keys/key-store.js';
import { createApiKey } from '../keys/create-key.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import { API_KEY, ScriptedWorker, bodyReader, listening } from '../testing.test-helpers.js';
import { JOB_TOKEN_SHARE } from '../limits/rate-limit-guard.js';

const SECRET = 'a-job-token-secret-for-tests';

/** A key store whose keys' scopes a test changes (an operator's own store can; `berth keys` only revokes). */
class EditableKeyStore extends MemoryKeyStore {
  readonly edits = new Map<string, Partial<StoredKey>>();
  override async get(id: string): Promise<StoredKey | undefined> {
    const k = await super.get(id);
    return k && { ...k, ...this.edits.get(id) };
  }
}

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
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
}

const run = async (url: string, key = API_KEY, token: Record<string, unknown> = {}) => {
  const r = await req(url, 'POST', '/v2/echo/run', key, { input: {}, token });
  expect(r.status).toBe(200);
  return { id: r.body.id as string, token: r.body.token as string };
};

describe('job tokens, hardened (issue #36)', () => {
  it('2,500 token reads of one job spend the job tokens own bucket: the issuing key is still answered 200', {
    timeout: 120_000,
  }, async () => {
    // The server clock stands still: every read falls in one 10 s window, however loaded the machine is.
    await using t = await listening({ jobTokenSecret: SECRET, clock: new ManualClock(Date.now()) });
    const a = await run(t.url);
    const b = await run(t.url);
    const codes = new Map<number, number>();
    const t0 = performance.now();
    for (let i = 0; i < 25; i++) {
      const rs = await Promise.all(
        Array.from({ length: 100 }, () => req(t.url, 'GET', `/v2/echo/status/${a.id}`, a.token)),
      );
      for (const r of rs) codes.set(r.status, (codes.get(r.status) ?? 0) + 1);
    }
    const ms = performance.now() - t0;
    // The tokens of one job get a tenth of the key's 2,000 /status per 10 s; the key's own bucket is untouched.
    const ok = codes.get(200) ?? 0;
    expect(ok).toBe(2000 / JOB_TOKEN_SHARE);
    expect(codes.get(429)).toBe(2500 - ok);
    const over = await req(t.url, 'GET', `/v2/echo/status/${a.id}`, a.token);
    expect(over.body.error).toMatch(/rate limit of 200 status requests per 10 s for the job tokens of job/);
    for (const id of [b.id, a.id]) expect((await req(t.url, 'GET', `/v2/echo/status/${id}`, API_KEY)).status).toBe(200);
    console.log(`2,500 token reads in ${Math.round(ms)} ms: ${ok} answered 200, the rest 429; the key's reads 200`);
  });

  it('has one spelling: padding, a changed unused bit or a stray character is 401 malformed', async () => {
    await using t = await listening({ jobTokenSecret: SECRET });
    const a = await run(t.url);
    expect((await req(t.url, 'GET', `/v2/echo/status/${a.id}`, a.token)).status).toBe(200);
    const last = a.token.at(-1)!;
    // The signature's 43rd character carries 4 bits of HMAC and 2 unused ones: flip an unused one.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = alphabet[alphabet.indexOf(last) ^ 1]!;
    for (const spelling of [
      `${a.token}=`,
      `${a.token}==`,
      a.token.slice(0, -1) + sibling,
      `${a.token} `,
      `${a.token}\t`,
    ]) {
      const r = await req(t.url, 'GET', `/v2/echo/status/${a.id}`, encodeURIComponent(spelling).replace(/%3D/g, '='));
      expect([spelling.slice(-3), r.status, r.body.code]).toEqual([spelling.slice(-3), 401, 'unauthorized']);
    }
    const [payload, sig] = a.token.slice('berth_jt_'.length).split('.') as [string, string];
    const padded = `berth_jt_${payload}=.${sig}`;
    expect((await req(t.url, 'GET', `/v2/echo/status/${a.id}`, padded)).status).toBe(401);
  });

  it('is refused once its environment key is rotated: another server with the same secret and store but a new key', async () => {
    const store = new MemoryStore();
    await using before = await listening({ jobTokenSecret: SECRET, store });
    await using after = await listening({ jobTokenSecret: SECRET, store, apiKeys: ['rotated-key'] });
    await using same = await listening({ jobTokenSecret: SECRET, store });
    const a = await run(before.url);
    expect((await req(same.url, 'GET', `/v2/echo/status/${a.id}`, a.token)).status).toBe(200);
    const r = await req(after.url, 'GET', `/v2/echo/status/${a.id}`, a.token);
    expect([r.status, r.body.code]).toEqual([401, 'unauthorized']);
    expect(r.body.error).toMatch(/API key key1 that issued this job token has changed since/);
  });

  it('follows its stored key: narrowed to another endpoint 403, made read-only it keeps reads but not cancel', async () => {
    const keyStore = new EditableKeyStore();
    const k = await createApiKey(keyStore, { name: 'app' });
    await using t = await listening({ jobTokenSecret: SECRET, keyStore, endpoints: ['echo', 'other'] });
    const a = await run(t.url, k.secret, { cancel: true });
    expect((await req(t.url, 'GET', `/v2/echo/status/${a.id}`, a.token)).status).toBe(200);
    keyStore.edits.set(k.key.id, { readOnly: true });
    expect((await req(t.url, 'GET', `/v2/echo/status/${a.id}`, a.token)).status).toBe(200);
    const c = await req(t.url, 'POST', `/v2/echo/cancel/${a.id}`, a.token);
    expect([c.status, c.body.code]).toEqual([403, 'key_read_only']);
    keyStore.edits.set(k.key.id, { endpoints: ['other'] });
    const n = await req(t.url, 'GET', `/v2/echo/status/${a.id}`, a.token);
    expect([n.status, n.body.code]).toEqual([403, 'key_endpoint_not_allowed']);
  });

  it('/stream: a token reads without taking (the backend still gets every chunk) and its SSE ends at expiry', async () => {
    const clock = new ManualClock(Date.now());
    await using t = await listening({ jobTokenSecret: SECRET, clock, heartbeatMs: 120_000 });
    const w = await ScriptedWorker.connect(t.url);
    const a = await run(t.url, API_KEY, { ttlSeconds: 30 });
    const as = await w.next('job.assign');
    w.send({ type: 'job.stream', id: a.id, attempt: as.attempt, seq: 0, chunks: ['one', 'two'] });
    const peek = await req(t.url, 'GET', `/v2/echo/stream/${a.id}?wait=2000`, a.token);
    expect(peek.body).toMatchObject({ id: a.id, stream: [{ output: 'one' }, { output: 'two' }], next: 2 });
    const again = await req(t.url, 'GET', `/v2/echo/stream/${a.id}?wait=0&from=1`, a.token);
    expect(again.body).toMatchObject({ stream: [{ output: 'two' }], next: 2 });
    const ac = new AbortController();
    const res = await fetch(`${t.url}/v2/echo/stream/${a.id}?token=${a.token}`, {
      headers: { accept: 'text/event-stream' },
      signal: ac.signal,
    });
    const r = bodyReader(res);
    await r.until('"two"');
    // The backend's taking read still gets both chunks: the token's reads took none.
    const backend = await req(t.url, 'GET', `/v2/echo/stream/${a.id}?wait=0`, API_KEY);
    expect(backend.body.stream).toEqual([{ output: 'one' }, { output: 'two' }]);
    clock.advance(30_000);
    const t0 = performance.now();
    await r.until('job_token_expired');
    expect(r.text).toMatch(/event: error\ndata: .*"code":"job_token_expired"/);
    expect(performance.now() - t0).toBeLessThan(6_000);
    ac.abort();
    await w.close();
  });

  it('/stream SSE of a token ends within the re-check interval after its stored key is revoked', async () => {
    const keyStore = new MemoryKeyStore();
    const k = await createApiKey(keyStore, { name: 'app' });
    await using t = await listening({ jobTokenSecret: SECRET, keyStore, heartbeatMs: 120_000 });
    const w = await ScriptedWorker.connect(t.url);
    const a = await run(t.url, k.secret);
    await w.next('job.assign');
    const ac = new AbortController();
    const res = await fetch(`${t.url}/v2/echo/stream/${a.id}`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${a.token}` },
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    const r = bodyReader(res);
    await keyStore.revoke(k.key.id, Date.now());
    const t0 = performance.now();
    await r.until('"code":"unauthorized"');
    expect(r.text).toMatch(/was revoked/);
    expect(performance.now() - t0).toBeLessThan(6_000);
    ac.abort();
    await w.close();
  });
});
