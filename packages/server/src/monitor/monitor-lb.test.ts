import { createLogger } from '@berth/protocol/log';
import { afterEach, describe, expect, it } from 'vitest';
import { call, startTestWorker, until, type TestWorker } from '../lb/lb.test-helpers.js';
import { parseExposition, sampleValue } from '../metrics/metrics-exposition.test-helpers.js';
import { createServer, type BerthServer } from '../server.js';
import type { MonitorReply } from './monitor.js';

const KEY = 'berth_monitorlbkey000000000000';
const auth = { authorization: `Bearer ${KEY}` };

let server: BerthServer | undefined;
const workers: TestWorker[] = [];

afterEach(async () => {
  await server?.close({ drainMs: 0 });
  server = undefined;
  for (const w of workers.splice(0)) await w.close();
});

describe('GET /v2/<ep>/monitor of a load-balancing endpoint (real sockets, real worker servers)', () => {
  it('charts requests (answered, 5xx), latency, waiting requests, workers and cold starts; says what each worker serves now and why requests wait', async () => {
    server = createServer({
      apiKeys: [KEY],
      endpoints: ['gen'],
      logger: createLogger({ write: () => {} }),
      lb: { gen: { coldStartWaitMs: 5_000, requestTimeoutMs: 5_000 } },
    });
    const { url } = await server.listen({ port: 0 });
    const monitor = async () => JSON.parse((await call(`${url}/v2/gen/monitor?window=60`, { headers: auth })).body);
    const lb = (path: string) => call(`${url}/v2/gen/lb${path}`, { method: 'POST', headers: auth, body: '{}' });

    // No worker yet: a request waits for one (a cold start), and the Monitor says so.
    const waiting = lb('/generate');
    await until(() => server!.lb.counts('gen').waiting === 1);
    let m: MonitorReply = await monitor();
    expect(m.lb).toEqual({
      waiting: 1,
      inFlight: 0,
      workers: { ready: 0, initializing: 0, unhealthy: 0 },
      serving: [],
    });
    expect(m.waitingFor).toBe('cold_start');
    expect(m.queue.at(-1)).toBe(1);
    const w = await startTestWorker('gen-a');
    workers.push(w);
    server.lb.add('gen', 'gen-a', { host: '127.0.0.1', port: w.port, healthPort: w.port });
    expect((await waiting).status).toBe(200);

    // Two more answered (a 404 of the worker's is an answer), one lost (the worker cuts the connection: 502).
    expect((await lb('/missing')).status).toBe(404);
    expect((await lb('/x')).status).toBe(200);
    expect((await lb('/die')).status).toBe(502);
    await until(() => server!.lb.connected('gen').length === 1); // back once its /ping says 200 again
    // One held in the worker: in flight now, on gen-a.
    const held = lb('/hold');
    await until(() => w.held.length === 1);
    m = await monitor();
    expect(m.lb).toEqual({
      waiting: 0,
      inFlight: 1,
      workers: { ready: 1, initializing: 0, unhealthy: 0 },
      serving: [{ workerId: 'gen-a', inFlight: 1, draining: false }],
    });
    expect(m.waitingFor).toBeUndefined();
    expect(m.workers.running.at(-1)).toBe(1);
    expect(m.queue.at(-1)).toBe(0);
    expect(m.totals).toMatchObject({ completed: 3, failed: 1, coldStarts: 1, delayP50: null });
    expect(m.totals.execP50).toBeGreaterThan(0);
    w.held.shift()!();
    expect((await held).status).toBe(200);

    // The same counts as /metrics.
    const text = (await call(`${url}/metrics`, { headers: auth })).body;
    const { samples } = parseExposition(text);
    const count = (status: string) =>
      sampleValue(samples, 'berth_lb_requests_total', { endpoint: 'gen', worker: 'gen-a', status }) ?? Number.NaN;
    m = await monitor();
    expect(m.totals.completed).toBe(count('200') + count('404'));
    expect(m.totals.failed).toBe(count('502'));
    expect(m.totals.coldStarts).toBe(
      sampleValue(samples, 'berth_worker_cold_start_seconds_count', { endpoint: 'gen', until: 'ready' }),
    );

    // The scaler cannot start another worker for want of a GPU: said at once, nothing waiting or not.
    server.workers.setWaitReason('gen', 'gpu');
    expect((await monitor()).waitingFor).toBe('gpu');
    server.workers.setWaitReason('gen', undefined);
    expect((await monitor()).waitingFor).toBeUndefined();
  });
});
