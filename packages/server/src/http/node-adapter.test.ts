import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { API_KEY, listening } from '../testing.test-helpers.js';

describe('node:http adapter', () => {
  it('answers 413 JSON to a real client sending 11 MB to /run, and accepts 11 MB on /runsync', async () => {
    await using t = await listening();
    const { url } = t;
    const big = JSON.stringify({ input: { blob: 'x'.repeat(11 * 1024 * 1024) } });
    const r = await fetch(`${url}/v2/echo/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: big,
    });
    expect(r.status).toBe(413);
    expect(((await r.json()) as { code: string }).code).toBe('payload_too_large');
    const ok = await fetch(`${url}/v2/echo/runsync?wait=1000`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}` },
      body: big,
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { status: string }).status).toBe('IN_QUEUE');
  });

  it('stops a chunked upload without Content-Length at the limit', async () => {
    await using t = await listening();
    const { port } = t;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/v2/echo/run',
          headers: { authorization: API_KEY, 'transfer-encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      const mb = Buffer.alloc(1024 * 1024, 32);
      let sent = 0;
      const pump = () => {
        while (sent < 64) {
          sent++;
          if (!req.write(mb)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    expect(status).toBe(413);
  });
});

describe('node:http adapter: request body backpressure', () => {
  it('a slow reader holds at most about 64 KiB of a large upload (the rest waits in TCP), then gets it all', async () => {
    const { createServer } = await import('node:http');
    const { nodeHandler } = await import('./node-adapter.js');
    const { BodyBudget } = await import('./body-budget.js');
    const budget = new BodyBudget(64 * 1024 * 1024);
    let heldWhileIdle = -1;
    const server = createServer(
      nodeHandler(
        async (req) => {
          let total = 0;
          for await (const c of req.body as AsyncIterable<Uint8Array>) {
            if (total === 0) {
              await new Promise((r) => setTimeout(r, 300)); // a slow reader: the client keeps sending meanwhile
              heldWhileIdle = budget.inFlight;
            }
            total += c.length;
          }
          return { status: 200, json: { total } };
        },
        { active: 0 },
        budget,
      ),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      const size = 8 * 1024 * 1024;
      const r = await fetch(`http://127.0.0.1:${port}/upload`, { method: 'POST', body: Buffer.alloc(size, 120) });
      expect(await r.json()).toEqual({ total: size });
      expect(heldWhileIdle).toBeGreaterThan(0);
      expect(heldWhileIdle).toBeLessThan(512 * 1024);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('reads a small body without pausing the request', async () => {
    const { createServer } = await import('node:http');
    const { nodeHandler } = await import('./node-adapter.js');
    let pauses = 0;
    const server = createServer((req, res) => {
      const pause = req.pause.bind(req);
      req.pause = () => (pauses++, pause());
      nodeHandler(
        async (r) => {
          let total = 0;
          for await (const c of r.body as AsyncIterable<Uint8Array>) total += c.length;
          return { status: 200, json: { total } };
        },
        { active: 0 },
      )(req, res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      const r = await fetch(`http://127.0.0.1:${port}/v2/echo/runsync`, {
        method: 'POST',
        body: JSON.stringify({ input: { n: 1 } }),
      });
      expect(await r.json()).toEqual({ total: Buffer.byteLength(JSON.stringify({ input: { n: 1 } })) });
      expect(pauses).toBe(0);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
