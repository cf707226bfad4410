import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { API_KEY, WORKER_TOKEN, call, testServer } from '../testing.test-helpers.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { createApiKey } from './create-key.js';
import { hashApiKey, keyIdOf, newApiKey } from './key-format.js';
import { MemoryKeyStore, type KeyStore } from './key-store.js';
import { SqliteKeyStore } from './sqlite-key-store.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('key format', () => {
  it('berth_sk_<12 char id>_<43 base64url chars>, 256 random bits, id recoverable, hash is sha256 hex', () => {
    const k = newApiKey();
    expect(k).toMatch(/^berth_sk_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    expect(keyIdOf(k)).toBe(k.slice(9, 21));
    expect(newApiKey()).not.toBe(k);
    expect(hashApiKey(k)).toMatch(/^[0-9a-f]{64}$/);
    expect(keyIdOf('berth_sk_short_x')).toBeUndefined();
    expect(keyIdOf('test-key')).toBeUndefined();
  });
});

const stores: [string, () => KeyStore][] = [
  ['MemoryKeyStore', () => new MemoryKeyStore()],
  ['SqliteKeyStore (path)', () => new SqliteKeyStore(join(dir, `k-${Math.random()}.sqlite`))],
  // The same file as the job store, through its handle: the table lives beside the jobs.
  [
    'SqliteKeyStore (SqliteStore handle)',
    () => new SqliteKeyStore(new SqliteStore({ file: join(dir, `s-${Math.random()}.sqlite`) }).db),
  ],
];

describe.each(stores)('%s', (_name, make) => {
  it('stores only the hash, lists, revokes once', async () => {
    const store = make();
    const a = await createApiKey(store, { name: 'ci', endpoints: ['echo', 'echo'], now: 1 });
    const b = await createApiKey(store, { readOnly: true, now: 2 });
    expect(a.secret.startsWith('berth_sk_')).toBe(true);
    const listed = await store.list();
    expect(listed.map((k) => k.id)).toEqual([a.key.id, b.key.id]);
    expect(JSON.stringify(listed)).not.toContain(a.secret.slice(22));
    expect(listed[0]).toEqual({
      id: a.key.id,
      name: 'ci',
      hash: hashApiKey(a.secret),
      endpoints: ['echo'],
      readOnly: false,
      kind: 'api',
      createdAt: 1,
      revokedAt: null,
    });
    expect(listed[1]).toMatchObject({ endpoints: null, readOnly: true });
    expect(await store.revoke(a.key.id, 5)).toBe(true);
    expect(await store.revoke(a.key.id, 6)).toBe(false);
    expect(await store.revoke('nope', 6)).toBe(false);
    expect((await store.get(a.key.id))?.revokedAt).toBe(5);
    await store.close();
  });

  it('refuses bad scopes', async () => {
    const store = make();
    await expect(createApiKey(store, { endpoints: ['Bad_Id'] })).rejects.toThrow(/not a valid endpoint id/);
    await expect(createApiKey(store, { endpoints: [] })).rejects.toThrow(/at least one endpoint/);
    await store.close();
  });
});

describe('SqliteKeyStore upgrade', () => {
  it('adds the kind column to a table made before worker tokens; its keys stay API keys', async () => {
    const file = join(dir, `old-${Math.random()}.sqlite`);
    const old = new SqliteStore({ file });
    old.db.exec(
      'CREATE TABLE api_keys (id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL, endpoints TEXT, read_only INTEGER NOT NULL, created_at INTEGER NOT NULL, revoked_at INTEGER)',
    );
    old.db
      .prepare('INSERT INTO api_keys VALUES (?, ?, ?, NULL, 0, 1, NULL)')
      .run('aaaaaaaaaaaa', 'old', 'ab'.repeat(32));
    const store = new SqliteKeyStore(old.db);
    expect((await store.get('aaaaaaaaaaaa'))?.kind).toBe('api');
    const w = await createApiKey(store, { worker: true, endpoints: ['echo'] });
    expect((await store.list()).map((k) => k.kind)).toEqual(['api', 'worker']);
    expect(w.secret.startsWith('berth_wk_')).toBe(true);
    await old.close();
  });
});

describe('stored keys on the API', () => {
  async function setup() {
    const file = join(dir, `api-${Math.random()}.sqlite`);
    const keyStore = new SqliteKeyStore(file);
    const s = testServer({ keyStore, endpoints: ['echo', 'other'] });
    const as = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } });
    return { file, keyStore, s, as };
  }

  it('a full key works everywhere; Bearer and bare forms; plain BERTH_API_KEY keys keep working', async () => {
    const { keyStore, s, as } = await setup();
    const { secret } = await createApiKey(keyStore);
    expect((await call(s, 'POST', '/v2/echo/run', { body: { input: {} }, ...as(secret) })).status).toBe(200);
    expect((await call(s, 'GET', '/v2/other/health', { headers: { authorization: secret } })).status).toBe(200);
    expect((await call(s, 'GET', '/v2/other/health', as(API_KEY))).status).toBe(200);
    await s.close({ drainMs: 0 });
    await keyStore.close();
  });

  it('endpoint scope: 403 key_endpoint_not_allowed elsewhere', async () => {
    const { keyStore, s, as } = await setup();
    const { secret } = await createApiKey(keyStore, { endpoints: ['echo'] });
    expect((await call(s, 'GET', '/v2/echo/health', as(secret))).status).toBe(200);
    const r = await call(s, 'GET', '/v2/other/health', as(secret));
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('key_endpoint_not_allowed');
    await s.close({ drainMs: 0 });
    await keyStore.close();
  });

  it('read-only: status, status-sync, stream, health, the webhook log and the batch GETs pass; run, runsync, cancel, retry, purge-queue, batch writes, openai are 403 key_read_only', async () => {
    const { keyStore, s, as } = await setup();
    const ro = (await createApiKey(keyStore, { readOnly: true })).secret;
    const id = (await call(s, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    for (const [m, p] of [
      ['GET', `/v2/echo/status/${id}`],
      ['POST', `/v2/echo/status/${id}`],
      ['GET', `/v2/echo/status-sync/${id}?wait=1000`],
      ['GET', '/v2/echo/health'],
      ['GET', `/v2/echo/webhooks/${id}`],
      ['GET', '/v2/echo/batch'],
    ] as const) {
      expect((await call(s, m, p, as(ro))).status, `${m} ${p}`).toBe(200);
    }
    for (const [m, p] of [
      ['POST', '/v2/echo/run'],
      ['POST', '/v2/echo/runsync'],
      ['POST', `/v2/echo/cancel/${id}`],
      ['POST', `/v2/echo/retry/${id}`],
      ['POST', '/v2/echo/purge-queue'],
      ['POST', '/v2/echo/batch'],
      ['POST', '/v2/echo/openai/v1/chat/completions'],
    ] as const) {
      const r = await call(s, m, p, { body: { input: {} }, ...as(ro) });
      expect(r.status, `${m} ${p}`).toBe(403);
      if (!p.includes('openai')) expect(r.body.code).toBe('key_read_only');
    }
    expect((await call(s, 'GET', `/v2/echo/status/${id}`)).body.status).toBe('IN_QUEUE'); // cancel did not happen
    await s.close({ drainMs: 0 });
    await keyStore.close();
  });

  it('401 for a key revoked from another connection (at once, on the running server), a right id with a wrong secret, and a worker token', async () => {
    const { file, keyStore, s, as } = await setup();
    const { key, secret } = await createApiKey(keyStore);
    expect((await call(s, 'GET', '/v2/echo/health', as(secret))).status).toBe(200);
    const cli = new SqliteKeyStore(file); // another connection to the file, as `berth keys revoke` opens it
    expect(await cli.revoke(key.id, Date.now())).toBe(true);
    await cli.close();
    const revoked = await call(s, 'GET', '/v2/echo/health', as(secret));
    expect(revoked.status).toBe(401);
    expect(revoked.body.error).toMatch(/revoked/);
    const forged = `${secret.slice(0, 22)}${'A'.repeat(43)}`;
    expect((await call(s, 'GET', '/v2/echo/health', as(forged))).status).toBe(401);
    expect((await call(s, 'GET', '/v2/echo/health', as(WORKER_TOKEN))).status).toBe(401);
    await s.close({ drainMs: 0 });
    await keyStore.close();
  });
});
