import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '@berth/protocol/log';
import { createServer, type BerthServer } from '../server.js';
import { call, startTestWorker, until, type TestWorker } from './lb.test-helpers.js';

// GET /v2/<ep>/scaling (KEDA metrics-api) of a load-balancing endpoint: what a ScaledObject reads in a cluster.
const KEY = 'berth_lbscalekey000000000000000';
const auth = { authorization: `Bearer ${KEY}` };

let server: BerthServer | undefined;
let w: TestWorker | undefined;

afterEach(async () => {
  w?.held.splice(0).forEach((release) => release());
  await server?.close({ drainMs: 0 });
  server = undefined;
  await w?.close();
  w = undefined;
});

describe('GET /v2/<ep>/scaling of a load-balancing endpoint', () => {
  it('counts requests in flight and requests waiting for a worker, at concurrency per worker', async () => {
    server = createServer({
      apiKeys: [KEY],
      endpoints: [],
      logger: createLogger({ write: () => {} }),
      lb: { gen: { concurrency: 2, coldStartWaitMs: 5_000, requestTimeoutMs: 5_000 } },
      scaling: { gen: { minWorkers: 0, maxWorkers: 5, idleTimeoutMs: 5_000, concurrency: 2 } },
    });
    const { url } = await server.listen({ port: 0 });
    const scaling = async () => (await call(`${url}/v2/gen/scaling`, { headers: auth })).body;
    expect(JSON.parse(await scaling())).toMatchObject({ desiredWorkers: 0, inQueue: 0, inProgress: 0, workers: 0 });

    // From zero: three requests wait for the first worker (cold start).
    const pending = [1, 2, 3].map(() => call(`${url}/v2/gen/lb/hold`, { method: 'POST', headers: auth }));
    for (const end = Date.now() + 5_000; JSON.parse(await scaling()).inQueue !== 3; )
      if (Date.now() > end) throw new Error(`never 3 waiting: ${await scaling()}`);
      else await new Promise((r) => setTimeout(r, 20));
    expect(JSON.parse(await scaling())).toMatchObject({ desiredWorkers: 2, inQueue: 3, inProgress: 0, workers: 0 });

    // One worker at concurrency 2: two in flight on it, one still waiting.
    w = await startTestWorker('gen-1');
    server.lb.add('gen', 'gen-1', { host: '127.0.0.1', port: w.port, healthPort: w.port });
    await until(() => w!.held.length === 2);
    expect(JSON.parse(await scaling())).toMatchObject({ desiredWorkers: 2, inQueue: 1, inProgress: 2, workers: 1 });

    // Released: the third goes through, then nothing is left and the desired count falls back to the floor.
    w.held.splice(0).forEach((release) => release());
    await until(() => w!.held.length === 1);
    w.held.splice(0).forEach((release) => release());
    expect((await Promise.all(pending)).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(JSON.parse(await scaling())).toMatchObject({ desiredWorkers: 0, inQueue: 0, inProgress: 0, workers: 1 });
  });
});
