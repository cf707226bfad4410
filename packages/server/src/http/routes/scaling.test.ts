import { ScalingReplySchema } from '@berth/protocol';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../clock.js';
import { createApiKey } from '../../keys/create-key.js';
import { MemoryKeyStore } from '../../keys/key-store.js';
import { call, testServer } from '../../testing.test-helpers.js';

const policies = {
  echo: {
    minWorkers: 0,
    maxWorkers: 4,
    idleTimeoutMs: 5000,
    concurrency: 1,
    scaler: { type: 'request-count' as const, jobsPerWorker: 4 },
  },
  slow: {
    minWorkers: 1,
    maxWorkers: 3,
    idleTimeoutMs: 5000,
    concurrency: 1,
    scaler: { type: 'queue-delay' as const, seconds: 4 },
  },
  plain: { minWorkers: 0, maxWorkers: 2, idleTimeoutMs: 5000, concurrency: undefined },
};

async function submit(s: ReturnType<typeof testServer>, ep: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++)
    expect((await call(s, 'POST', `/v2/${ep}/run`, { body: { input: {} } })).status).toBe(200);
}

describe('GET /v2/<endpoint>/scaling (KEDA metrics-api)', () => {
  it('request-count: ceil((queued + running) / jobsPerWorker), within min and max, in the documented shape', async () => {
    const s = testServer({ endpoints: ['echo', 'slow', 'plain'], scaling: policies });
    const zero = await call(s, 'GET', '/v2/echo/scaling');
    expect(zero.status).toBe(200);
    expect(ScalingReplySchema.parse(zero.body)).toEqual({
      endpoint: 'echo',
      desiredWorkers: 0,
      minWorkers: 0,
      maxWorkers: 4,
      scaler: 'request-count',
      inQueue: 0,
      inProgress: 0,
      workers: 0,
    });
    await submit(s, 'echo', 9);
    expect((await call(s, 'GET', '/v2/echo/scaling')).body).toMatchObject({ desiredWorkers: 3, inQueue: 9 });
    await submit(s, 'echo', 20);
    expect((await call(s, 'GET', '/v2/echo/scaling')).body).toMatchObject({ desiredWorkers: 4, inQueue: 29 });
    // No scaler given: request-count at `concurrency` (1 when unset) jobs per worker, as berth dev scales.
    await submit(s, 'plain', 1);
    expect((await call(s, 'GET', '/v2/plain/scaling')).body).toMatchObject({
      desiredWorkers: 1,
      scaler: 'request-count',
    });
  });

  it('queue-delay: minWorkers with nothing waiting; one worker at once when none is there', async () => {
    const clock = new ManualClock(1_000_000);
    const s = testServer({ endpoints: ['echo', 'slow', 'plain'], scaling: policies, clock });
    expect((await call(s, 'GET', '/v2/slow/scaling')).body).toMatchObject({ desiredWorkers: 1, scaler: 'queue-delay' });
    await submit(s, 'slow', 5);
    expect((await call(s, 'GET', '/v2/slow/scaling')).body).toMatchObject({ desiredWorkers: 1, inQueue: 5 });
  });

  it('scoped to the key: a key of another endpoint gets 403, an unknown endpoint or one without settings 404', async () => {
    const keyStore = new MemoryKeyStore();
    const s = testServer({ endpoints: ['echo', 'slow', 'other'], scaling: policies, keyStore });
    const { secret } = await createApiKey(keyStore, { endpoints: ['slow'], readOnly: true });
    const auth = { headers: { authorization: `Bearer ${secret}` } };
    expect((await call(s, 'GET', '/v2/slow/scaling', auth)).status).toBe(200);
    const refused = await call(s, 'GET', '/v2/echo/scaling', auth);
    expect(refused.status).toBe(403);
    expect((await call(s, 'GET', '/v2/nope/scaling')).body.code).toBe('endpoint_not_found');
    const none = await call(s, 'GET', '/v2/other/scaling');
    expect(none.status).toBe(404);
    expect(none.body.error).toMatch(/other has no scaling settings/);
    expect((await call(s, 'POST', '/v2/slow/scaling')).status).toBe(405);
  });

  it('a server started without scaling settings answers 404 endpoint_not_found, saying how to give some', async () => {
    const res = await call(testServer(), 'GET', '/v2/echo/scaling');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('endpoint_not_found');
    expect(res.body.error).toContain('has no scaling settings');
  });
});
