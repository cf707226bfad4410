import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A small HTTP worker in the shape of RunPod's load-balancing template, on a real socket (port 0). */
export interface TestWorker {
  port: number;
  /** What `/ping` answers (200 ready, 204 initializing, 500 broken). */
  ping: number;
  /** Requests seen: method, url and headers. */
  seen: { method: string; url: string; headers: IncomingMessage['headers'] }[];
  /** Requests whose client went away before they were answered (`/hold`). */
  aborted: number;
  /** Requests held (`/hold`), answered by `releaseHeld()`. */
  held: (() => void)[];
  server: Server;
  close(): Promise<void>;
}

export async function startTestWorker(name: string): Promise<TestWorker> {
  const w = { ping: 200, seen: [], aborted: 0, held: [] } as unknown as TestWorker;
  w.server = createServer((req, res) => {
    if (req.url === '/ping') return void res.writeHead(w.ping).end(w.ping === 200 ? '{"status":"healthy"}' : undefined);
    w.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/hold') {
        res.on('close', () => {
          if (!res.writableFinished) w.aborted++;
        });
        w.held.push(() => res.writeHead(200).end('released'));
        return;
      }
      if (url.pathname === '/die') return void req.socket.destroy();
      if (url.pathname === '/sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'set-cookie': ['a=1', 'b=2'] });
        let n = 0;
        const t = setInterval(() => {
          res.write(`data: ${n}\n\n`);
          if (++n === 3) {
            clearInterval(t);
            res.end();
          }
        }, 150);
        res.on('close', () => clearInterval(t));
        return;
      }
      const body = Buffer.concat(chunks).toString();
      res.writeHead(url.pathname === '/missing' ? 404 : 200, {
        'content-type': 'application/json',
        connection: 'keep-alive',
      });
      res.end(JSON.stringify({ worker: name, method: req.method, path: url.pathname, query: url.search, body }));
    });
  });
  await new Promise<void>((r) => w.server.listen(0, '127.0.0.1', r));
  w.port = (w.server.address() as AddressInfo).port;
  w.close = () =>
    new Promise<void>((r) => {
      w.server.closeAllConnections();
      w.server.close(() => r());
    });
  return w;
}

/** A raw request through the proxy: status, headers, body, and when each body chunk arrived. */
export function call(
  url: string,
  o: { method?: string; headers?: Record<string, string>; body?: string | Buffer; signal?: AbortSignal } = {},
): Promise<{
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
  chunks: { at: number; text: string }[];
}> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: o.method ?? 'GET', headers: o.headers ?? {}, signal: o.signal }, (res) => {
      const chunks: { at: number; text: string }[] = [];
      res.on('data', (c: Buffer) => chunks.push({ at: performance.now(), text: c.toString() }));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: chunks.map((c) => c.text).join(''),
          chunks,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

export async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
