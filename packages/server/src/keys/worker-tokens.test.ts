import { describe, expect, it } from 'vitest';
import { PgKeyStore } from './pg-key-store.js';
import { createApiKey } from './create-key.js';
import { MemoryKeyStore, type KeyStore } from './key-store.js';
import { dropSchema, PG_TEST_URL, pgUnavailable, testSchema } from '../store/postgres/pg-test-db.test-helpers.js';
import { ScriptedWorker, call, listening, WORKER_TOKEN } from '../testing.test-helpers.js';
import { WorkerAuth } from './worker-auth.js';

// Issue #16 item 3: per-endpoint worker tokens; a worker may only say hello for its token's endpoints, and
// endpoints exist only when configured (or created with a worker token, or with acceptWorkerEndpoints).
describe('per-endpoint worker tokens', () => {
  it('a worker token serves only its endpoints; revoked at once; refused on the API; API keys refused as worker tokens', async () => {
    const keyStore = new MemoryKeyStore();
    await using t = await listening({ keyStore, endpoints: ['echo', 'other'] });
    const { key, secret } = await createApiKey(keyStore, { worker: true, endpoints: ['echo'] });
    expect(secret).toMatch(/^berth_wk_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    const ok = await ScriptedWorker.connect(t.url, { workerId: 'e1' }, secret);
    await ok.next('welcome');
    const elsewhere = await ScriptedWorker.connect(t.url, { workerId: 'o1', endpointId: 'other' }, secret);
    expect(await elsewhere.next('error')).toMatchObject({ code: 'unauthorized' });
    const id = (await call(t.server, 'POST', '/v2/other/run', { body: { input: { secret: 1 } } })).body.id;
    expect(elsewhere.count('job.assign')).toBe(0); // never saw other's job
    expect(
      (await call(t.server, 'GET', `/v2/echo/health`, { headers: { authorization: `Bearer ${secret}` } })).status,
    ).toBe(401);
    const apiKey = (await createApiKey(keyStore)).secret;
    await expect(ScriptedWorker.connect(t.url, {}, apiKey)).rejects.toThrow('HTTP 401');
    await keyStore.revoke(key.id, Date.now());
    await expect(ScriptedWorker.connect(t.url, { workerId: 'e2' }, secret)).rejects.toThrow('HTTP 401');
    expect((await call(t.server, 'GET', `/v2/other/status/${id}`)).body.status).toBe('IN_QUEUE');
    await ok.close();
  });

  it('endpoints exist only when configured: the shared token cannot create one, a token made for it can, unless dynamic ones are allowed', async () => {
    const keyStore = new MemoryKeyStore();
    await using t = await listening({ keyStore });
    const shared = await ScriptedWorker.connect(t.url, { endpointId: 'fresh' }, WORKER_TOKEN);
    expect(await shared.next('error')).toMatchObject({ code: 'unknown_endpoint' });
    expect((await call(t.server, 'GET', '/v2/fresh/health')).status).toBe(404);
    const { secret } = await createApiKey(keyStore, { worker: true, endpoints: ['fresh'] });
    const w = await ScriptedWorker.connect(t.url, { endpointId: 'fresh' }, secret);
    await w.next('welcome');
    expect((await call(t.server, 'GET', '/v2/fresh/health')).status).toBe(200);
    await w.close();
    await using open = await listening({ acceptWorkerEndpoints: true });
    const dyn = await ScriptedWorker.connect(open.url, { endpointId: 'dyn' });
    await dyn.next('welcome');
    expect((await call(open.server, 'GET', '/v2/dyn/health')).status).toBe(200);
    await dyn.close();
  });
});

const skip = await pgUnavailable();

describe.each([['MemoryKeyStore'], ['PgKeyStore']])('authenticateWorker on %s', (name) => {
  it.skipIf(name === 'PgKeyStore' && skip !== undefined)(
    `shared and stored tokens, endpoint checks${name === 'PgKeyStore' && skip ? ` (skipped: ${skip})` : ''}`,
    async () => {
      const schema = testSchema();
      const store: KeyStore =
        name === 'PgKeyStore' ? await PgKeyStore.open({ url: PG_TEST_URL, schema }) : new MemoryKeyStore();
      try {
        const auth = new WorkerAuth(['dev-token'], store);
        const { key, secret } = await createApiKey(store, { worker: true, endpoints: ['echo', 'sd'] });
        expect(await auth.authenticateWorker(`Bearer ${secret}`)).toEqual({
          credentialId: key.id,
          endpoints: ['echo', 'sd'],
        });
        expect(await auth.authenticateWorker(secret, 'sd')).toEqual({
          credentialId: key.id,
          endpoints: ['echo', 'sd'],
        });
        expect(await auth.authenticateWorker(secret, 'other')).toBeNull();
        expect(await auth.authenticateWorker('dev-token', 'anything')).toEqual({
          credentialId: 'worker-token1',
          endpoints: null,
        });
        expect(await auth.authenticateWorker(`${secret.slice(0, -1)}x`)).toBeNull();
        expect(await auth.authenticateWorker((await createApiKey(store)).secret)).toBeNull();
        expect(await auth.authenticateWorker(undefined)).toBeNull();
        expect((await store.get(key.id))?.kind).toBe('worker');
        await store.revoke(key.id, 1);
        expect(await auth.authenticateWorker(secret)).toBeNull();
      } finally {
        await store.close();
        if (name === 'PgKeyStore') await dropSchema(schema);
      }
    },
  );
});
