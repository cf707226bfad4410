import { createLogger } from '@berth/protocol/log';
import { afterEach, describe, expect, it } from 'vitest';
import { call, startTestWorker, until, type TestWorker } from '../../lb/lb.test-helpers.js';
import { createServer, type BerthServer } from '../../server.js';

const KEY = 'berth_cataloglbkey000000000000';
const auth = { authorization: `Bearer ${KEY}` };

let server: BerthServer | undefined;
let worker: TestWorker | undefined;

afterEach(async () => {
  await server?.close({ drainMs: 0 });
  await worker?.close();
  server = worker = undefined;
});

describe('GET /v2/_berth/catalog with a load-balancing endpoint (real sockets, a real worker server)', () => {
  it('lists it as type "http" with the proxy worker counts, and queue endpoints as type "queue"', async () => {
    server = createServer({
      apiKeys: [KEY],
      endpoints: ['echo', 'gen'],
      logger: createLogger({ write: () => {} }),
      lb: { gen: { coldStartWaitMs: 5_000 } },
    });
    const { url } = await server.listen({ port: 0 });
    const catalog = async () => JSON.parse((await call(`${url}/v2/_berth/catalog`, { headers: auth })).body);

    let eps = (await catalog()).endpoints;
    expect(eps.map((e: { id: string; type: string }) => [e.id, e.type])).toEqual([
      ['echo', 'queue'],
      ['gen', 'http'],
    ]);
    expect(eps[1]).toEqual({
      id: 'gen',
      type: 'http',
      stream: false,
      inputSchema: null,
      workers: expect.objectContaining({ ready: 0, initializing: 0 }),
    });

    // A worker the proxy checked (its /ping says 200) is counted from the proxy, not from the job queue.
    worker = await startTestWorker('gen-a');
    server.lb.add('gen', 'gen-a', { host: '127.0.0.1', port: worker.port, healthPort: worker.port });
    await until(() => server!.lb.connected('gen').length === 1);
    eps = (await catalog()).endpoints;
    expect(eps[1].workers).toMatchObject({ ready: 1, idle: 1 });
    expect(eps[0]).toMatchObject({ id: 'echo', type: 'queue', workers: { ready: 0, idle: 0 } });
  });
});
