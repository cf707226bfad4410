/** The bench's HTTP client: node:http with keep-alive (cheaper per request than fetch, so the client loads the
 * machine less), JSON in and out, and a closed-loop driver. */
import http from 'node:http';
import { percentile } from './stats.js';

const agent = new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 });

export interface Reply {
  status: number;
  body: any;
}

export function request(
  url: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
  timeoutMs = 120_000,
): Promise<Reply> {
  // A Buffer is sent as it is (JSON the caller made once, e.g. a 19 MB body sent many times).
  const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: {
          ...headers,
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        },
        timeout: timeoutMs,
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString();
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = text;
          }
          resolve({ status: res.statusCode ?? 0, body: json });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

export interface LoopResult {
  ok: number;
  failed: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  firstError?: string;
}

/**
 * A closed loop: `concurrency` clients each call `once(n)` back to back until `count` calls were made in total
 * or `seconds` passed. `once` resolves true for a correct answer.
 */
export async function closedLoop(
  concurrency: number,
  once: (n: number) => Promise<true | string>,
  limit: { count?: number; seconds?: number },
): Promise<LoopResult> {
  const lat: number[] = [];
  let failed = 0;
  let firstError: string | undefined;
  let next = 0;
  const count = limit.count ?? Infinity;
  const t0 = performance.now();
  const end = limit.seconds !== undefined ? t0 + limit.seconds * 1000 : Infinity;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count && performance.now() < end) {
        const n = next++;
        const s = performance.now();
        let r: true | string;
        try {
          r = await once(n);
        } catch (err) {
          r = err instanceof Error ? err.message : String(err);
        }
        if (r === true) lat.push(performance.now() - s);
        else {
          failed++;
          firstError ??= r;
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return {
    ok: lat.length,
    failed,
    seconds,
    perSecond: lat.length / seconds,
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
    ...(firstError ? { firstError } : {}),
  };
}

/** Reads an SSE response: calls `onEvent(event, data)` for each event; resolves when the server ends it. */
export function sse(
  url: string,
  headers: Record<string, string>,
  onEvent: (event: string, data: string) => void,
  timeoutMs = 120_000,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      url,
      { agent: false, headers: { ...headers, accept: 'text/event-stream' }, timeout: timeoutMs },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`GET ${url}: ${res.statusCode}`));
        }
        res.setEncoding('utf8');
        let buf = '';
        res.on('data', (d: string) => {
          buf += d;
          let at: number;
          while ((at = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, at);
            buf = buf.slice(at + 2);
            let event = 'message';
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith('event:')) event = line.slice(6).trim();
              else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
            }
            if (data.length > 0) onEvent(event, data.join('\n'));
          }
        });
        res.on('end', () => resolve());
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: SSE timed out`)));
    req.on('error', reject);
  });
}
