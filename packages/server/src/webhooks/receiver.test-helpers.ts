import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  at: number;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** What the receiver does with the n-th request: answer a status (optionally after `delayMs`), or never answer. */
export type Reply = number | { status: number; delayMs?: number; location?: string } | 'hang';

/**
 * A real webhook receiver on 127.0.0.1, port 0: records every request and answers from a script (the last
 * entry repeats). `await using` closes it, hung requests included.
 */
export async function webhookReceiver(script: Reply[] = [200]) {
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const open = new Set<ServerResponse>();
  const load = { now: 0, max: 0 };
  const server = createServer((req, res) => {
    load.now++;
    load.max = Math.max(load.max, load.now);
    res.on('close', () => load.now--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = received.length;
      received.push({
        at: performance.now(),
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      for (const w of waiters.splice(0)) w();
      const reply = script[Math.min(n, script.length - 1)]!;
      if (reply === 'hang') return void open.add(res);
      const r = typeof reply === 'number' ? { status: reply } : reply;
      const answer = () => res.writeHead(r.status, r.location ? { location: r.location } : {}).end('ok');
      if (r.delayMs) setTimeout(answer, r.delayMs);
      else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    received,
    /** Requests being answered at once: now and the most seen. */
    load,
    /** Waits until `n` requests arrived, bounded. */
    async count(n: number, timeoutMs = 5000): Promise<Received[]> {
      const end = Date.now() + timeoutMs;
      while (received.length < n) {
        const left = end - Date.now();
        if (left <= 0) throw new Error(`receiver got ${received.length} requests, expected ${n}`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, left);
          waiters.push(() => {
            clearTimeout(t);
            r();
          });
        });
      }
      return received;
    },
    async [Symbol.asyncDispose]() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
