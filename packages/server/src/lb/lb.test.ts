import { request, type IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '@berth/protocol/log';
import { createServer, type BerthServer } from '../server.js';
import { call, startTestWorker, until, type TestWorker } from './lb.test-helpers.js';

const KEY = 'berth_lbtestkey0000000000000000';
const auth = { authorization: `Bearer ${KEY}` };

let server: BerthServer | undefined;
let workers: TestWorker[] = [];

afterEach(async () => {
  await server?.close({ drainMs: 0 });
  server = undefined;
  for (const w of workers) await w.close();
  workers = [];
});

async function setup(lb: Record<string, unknown> = {}) {
  server = createServer({
    apiKeys: [KEY],
    endpoints: ['queue'],
    logger: createLogger({ write: () => {} }),
    lb: {
      gen: { coldStartWaitMs: 1_500, affinityWaitMs: 400, requestTimeoutMs: 1_500, maxBodyBytes: 1_000, ...lb },
    },
  });
  const { url } = await server.listen({ port: 0 });
  return url;
}

async function worker(id: string, ping = 200): Promise<TestWorker> {
  const w = await startTestWorker(id);
  w.ping = ping;
  workers.push(w);
  server!.lb.add('gen', id, { host: '127.0.0.1', port: w.port, healthPort: w.port });
  return w;
}

const ready = (id: string) => () => server!.lb.connected('gen').some((w) => w.workerId === id);

describe('load-balancing proxy (real sockets)', () => {
  it('forwards method, path, query, headers and body; answers with X-Runpod-Worker-Id; never forwards the API key', async () => {
    const url = await setup();
    const w = await worker('gen-a');
    await until(ready('gen-a'));
    const r = await call(`${url}/v2/gen/lb/generate/x?q=a%20b&n=1`, {
      method: 'POST',
      headers: {
        ...auth,
        'content-type': 'application/json',
        'x-custom': 'yes',
        connection: 'keep-alive, x-hop',
        'x-hop': '1',
      },
      body: '{"prompt":"hi"}',
    });
    expect(r.status).toBe(200);
    expect(r.headers['x-runpod-worker-id']).toBe('gen-a');
    expect(JSON.parse(r.body)).toEqual({
      worker: 'gen-a',
      method: 'POST',
      path: '/generate/x',
      query: '?q=a%20b&n=1',
      body: '{"prompt":"hi"}',
    });
    const seen = w.seen[0]!.headers;
    expect(seen['authorization']).toBeUndefined();
    expect(seen['x-hop']).toBeUndefined();
    expect(seen['x-custom']).toBe('yes');
    // The worker's own statuses pass through; so does a PUT with no body.
    expect((await call(`${url}/v2/gen/lb/missing`, { headers: auth })).status).toBe(404);
    expect((await call(`${url}/v2/gen/lb/`, { method: 'PUT', headers: auth })).status).toBe(200);
    // Keys, routes and limits as for queue routes.
    expect((await call(`${url}/v2/gen/lb/generate`)).status).toBe(401);
    expect(JSON.parse((await call(`${url}/v2/queue/lb/x`, { headers: auth })).body).code).toBe('route_not_found');
    expect(JSON.parse((await call(`${url}/v2/gen/run`, { method: 'POST', headers: auth, body: '{}' })).body).code).toBe(
      'route_not_found',
    );
    const big = await call(`${url}/v2/gen/lb/echo`, { method: 'POST', headers: auth, body: 'x'.repeat(1_001) });
    expect([big.status, JSON.parse(big.body).code]).toEqual([413, 'payload_too_large']);
    const health = JSON.parse((await call(`${url}/v2/gen/health`, { headers: auth })).body);
    expect(health.workers).toMatchObject({ ready: 1, idle: 1, initializing: 0 });
    expect(health.jobs.completed).toBeGreaterThanOrEqual(3);
  });

  it('a worker answering 204 gets no traffic; a request waits for the first 200, or gives up with 400 no_workers_available', async () => {
    const url = await setup();
    const slow = await worker('gen-init', 204);
    const answered = call(`${url}/v2/gen/lb/generate`, { headers: auth });
    await new Promise((r) => setTimeout(r, 300));
    expect(slow.seen).toEqual([]);
    expect(JSON.parse((await call(`${url}/v2/gen/health`, { headers: auth })).body).jobs.inQueue).toBe(1);
    const w = await worker('gen-b');
    const r = await answered;
    expect([r.status, r.headers['x-runpod-worker-id']]).toEqual([200, 'gen-b']);
    expect(w.seen).toHaveLength(1);
    server!.lb.remove('gen-b', true);
    const none = await call(`${url}/v2/gen/lb/generate`, { headers: auth });
    expect([none.status, JSON.parse(none.body).code]).toEqual([400, 'no_workers_available']);
    expect(slow.seen).toEqual([]);
  });

  it('affinity: soft falls back, strict waits then 400 worker_timeout, a gone worker is 404 affinity_worker_gone', async () => {
    const url = await setup();
    const a = await worker('gen-a');
    await worker('gen-b');
    await until(() => server!.lb.connected('gen').length === 2);
    for (let i = 0; i < 3; i++) {
      const r = await call(`${url}/v2/gen/lb/x`, { headers: { ...auth, 'x-runpod-worker-id': 'gen-b' } });
      expect(r.headers['x-runpod-worker-id']).toBe('gen-b');
    }
    // gen-a busy (concurrency 1): soft goes elsewhere, strict waits and times out.
    const held = call(`${url}/v2/gen/lb/hold`, { headers: { ...auth, 'x-runpod-worker-id': 'strict gen-a' } });
    await until(() => a.held.length === 1);
    const soft = await call(`${url}/v2/gen/lb/x`, { headers: { ...auth, 'x-runpod-worker-id': 'gen-a' } });
    expect(soft.headers['x-runpod-worker-id']).toBe('gen-b');
    const strict = await call(`${url}/v2/gen/lb/x`, { headers: { ...auth, 'x-runpod-worker-id': 'strict gen-a' } });
    expect([strict.status, JSON.parse(strict.body).code]).toEqual([400, 'worker_timeout']);
    // A strict request waiting for its worker goes through once it frees up.
    const waiting = call(`${url}/v2/gen/lb/x`, { headers: { ...auth, 'x-runpod-worker-id': 'strict gen-a' } });
    await new Promise((r) => setTimeout(r, 100));
    a.held.shift()!();
    expect((await held).body).toBe('released');
    expect((await waiting).headers['x-runpod-worker-id']).toBe('gen-a');
    const gone = await call(`${url}/v2/gen/lb/x`, { headers: { ...auth, 'x-runpod-worker-id': 'strict gen-zz' } });
    expect([gone.status, JSON.parse(gone.body)]).toEqual([
      404,
      expect.objectContaining({
        code: 'affinity_worker_gone',
        details: { reason: 'affinity_worker_gone', workerId: 'gen-zz' },
      }),
    ]);
    const bad = await call(`${url}/v2/gen/lb/x`, { headers: { ...auth, 'x-runpod-worker-id': 'sticky gen-a' } });
    expect([bad.status, JSON.parse(bad.body).code]).toEqual([400, 'invalid_request']);
  });

  it('strict-resume starts a scaled-down worker again under its id; strict does not', async () => {
    const url = await setup({ affinityWaitMs: 3_000 });
    await worker('gen-a');
    await until(ready('gen-a'));
    server!.lb.remove('gen-a', true);
    const strict = await call(`${url}/v2/gen/lb/x`, { headers: { ...auth, 'x-runpod-worker-id': 'strict gen-a' } });
    expect(strict.status).toBe(404);
    const asked: string[] = [];
    server!.lb.hooks.resume = (_ep, id) => {
      asked.push(id);
      setTimeout(() => void worker(id), 100);
      return true;
    };
    const r = await call(`${url}/v2/gen/lb/x`, { headers: { ...auth, 'x-runpod-worker-id': 'strict-resume gen-a' } });
    expect([r.status, r.headers['x-runpod-worker-id'], asked]).toEqual([200, 'gen-a', ['gen-a']]);
  });

  it('a client that disconnects aborts the upstream request; a worker that dies mid-request is 502 worker_lost; a slow one 504', async () => {
    const url = await setup();
    const w = await worker('gen-a');
    await until(ready('gen-a'));
    const ac = new AbortController();
    const gone = call(`${url}/v2/gen/lb/hold`, { headers: auth, signal: ac.signal }).catch((e: Error) => e);
    await until(() => w.held.length === 1);
    ac.abort();
    await gone;
    await until(() => w.aborted === 1);
    // The worker is free again.
    expect((await call(`${url}/v2/gen/lb/x`, { headers: auth })).status).toBe(200);
    const lost = await call(`${url}/v2/gen/lb/die`, { method: 'POST', headers: auth, body: '{}' });
    expect([lost.status, JSON.parse(lost.body).code]).toEqual([502, 'worker_lost']);
    await until(ready('gen-a')); // its health said 200 again
    const slow = await call(`${url}/v2/gen/lb/hold`, { headers: auth });
    expect([slow.status, JSON.parse(slow.body).code]).toEqual([504, 'processing_timeout']);
    await until(() => w.aborted === 2);
  });

  it('server-sent events pass through chunk by chunk, Set-Cookie kept apart', async () => {
    const url = await setup();
    await worker('gen-a');
    await until(ready('gen-a'));
    const r = await call(`${url}/v2/gen/lb/sse`, { headers: auth });
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(r.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(r.body).toBe('data: 0\n\ndata: 1\n\ndata: 2\n\n');
    expect(r.chunks.length).toBe(3);
    expect(r.chunks[2]!.at - r.chunks[0]!.at).toBeGreaterThan(200);
  });

  it('a small body sent after its headers is forwarded whole; a small chunked answer already received goes out with its length', async () => {
    const url = await setup();
    await worker('gen-a');
    await until(ready('gen-a'));
    const r = await new Promise<{ headers: IncomingMessage['headers']; body: string }>((resolve, reject) => {
      const req = request(
        `${url}/v2/gen/lb/echo`,
        { method: 'POST', headers: { ...auth, 'content-length': '12' } },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      req.flushHeaders();
      req.write('{"a":');
      setTimeout(() => req.end('"late"}'), 50);
    });
    expect(JSON.parse(r.body)).toMatchObject({ path: '/echo', body: '{"a":"late"}' });
    // The worker answered chunked in one packet: the client gets it in one piece with its Content-Length.
    expect([r.headers['content-length'], r.headers['transfer-encoding']]).toEqual([String(r.body.length), undefined]);
  });

  it('with concurrency 1, twenty requests waiting for the one worker are all answered', async () => {
    const url = await setup({ concurrency: 1 });
    const w = await worker('gen-a');
    await until(ready('gen-a'));
    const rs = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(`${url}/v2/gen/lb/n${i}`, { method: 'POST', headers: auth, body: '{}' }),
      ),
    );
    expect(rs.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(w.seen.map((s) => s.url).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `/n${i}`).sort());
  });

  it('host-based routing: <ep>.<lbDomain> is /v2/<ep>/lb/<path>', async () => {
    server = createServer({
      apiKeys: [KEY],
      lb: { gen: {} },
      lbDomain: 'lb.test',
      logger: createLogger({ write: () => {} }),
    });
    const { url } = await server.listen({ port: 0 });
    await worker('gen-a');
    await until(ready('gen-a'));
    const r = await call(`${url}/generate?x=1`, { headers: { ...auth, host: 'gen.lb.test:8080' } });
    expect(JSON.parse(r.body)).toMatchObject({ worker: 'gen-a', path: '/generate', query: '?x=1' });
  });
});
