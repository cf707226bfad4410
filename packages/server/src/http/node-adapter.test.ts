import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { API_KEY, listening } from '../testing.test-helpers.js';

describe('node:http adapter', () => {
  it('answers 413 JSON to a real client sending 11 MB to /run, and accepts 11 MB on /runsync', async () => {
    await using t = await listening();
    const { url } = t;
    const big = JSON.stringify({ input: { blob: 'x'.repeat(11 * 1024 * 1024) } });
    const r = await fetch(`${url}/v2/echo/run`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }, body: big });
    expect(r.status).toBe(413);
    expect(((await r.json()) as { code: string }).code).toBe('payload_too_large');
    const ok = await fetch(`${url}/v2/echo/runsync?wait=1000`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}` }, body: big });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { status: string }).status).toBe('IN_QUEUE');
  });

  it('stops a chunked upload without Content-Length at the limit', async () => {
    await using t = await listening();
    const { port } = t;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ port, host: '127.0.0.1', method: 'POST', path: '/v2/echo/run', headers: { authorization: API_KEY, 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
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
