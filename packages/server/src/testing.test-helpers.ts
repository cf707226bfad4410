import {
  decodeServerMessage,
  PROTOCOL_VERSION,
  type ServerMessage,
  WORKER_WS_PATH,
  type WorkerMessage,
} from '@berth/protocol';
import { silentLogger } from '@berth/protocol/log';
import WebSocket from 'ws';
import { createServer, type BerthServer } from './server.js';
import type { ServerOptions } from './options.js';

export const API_KEY = 'test-key';
export const WORKER_TOKEN = 'test-worker-token';

/** A control plane for tests: memory store, silent logs, one key and token, no sweep timer (tests sweep). */
export function testServer(opts: ServerOptions = {}): BerthServer {
  return createServer({
    apiKeys: [API_KEY],
    workerTokens: [WORKER_TOKEN],
    endpoints: ['echo'],
    logger: silentLogger,
    sweepIntervalMs: 0,
    ...opts,
  });
}

/** A test server listening on a free loopback port; `await using` closes it. */
export async function listening(opts: ServerOptions = {}) {
  const server = testServer(opts);
  const { url, port } = await server.listen({ port: 0 });
  return { server, url, port, [Symbol.asyncDispose]: () => server.close({ drainMs: 0 }) };
}

/** Polls /status until the job reaches `status`; answers that job object. */
export function untilStatus(server: BerthServer, endpoint: string, id: string, status: string, timeoutMs = 5000) {
  return until(
    async () => {
      const b = (await call(server, 'GET', `/v2/${endpoint}/status/${id}`)).body;
      return b.status === status ? b : undefined;
    },
    timeoutMs,
    `job ${id} to be ${status}`,
  );
}

/** Calls the socket-free core as a client would. */
export async function call(
  server: BerthServer,
  method: string,
  path: string,
  init: { body?: unknown; raw?: string; headers?: Record<string, string> } = {},
) {
  const url = new URL(path, 'http://x');
  const headers: Record<string, string> = { authorization: `Bearer ${API_KEY}`, ...init.headers };
  const body = init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
  const res = await server.handle({
    method,
    path: url.pathname,
    query: url.searchParams,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  if (!('json' in res)) throw new Error('expected a JSON answer');
  return { status: res.status, headers: res.headers ?? {}, body: res.json as Record<string, any> };
}

/**
 * A worker scripted by the test over a real WebSocket: it sends what the test says and records what the
 * server sends.
 */
export class ScriptedWorker {
  readonly received: ServerMessage[] = [];
  private waiters: (() => void)[] = [];
  closed = false;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const r = decodeServerMessage(data.toString());
      if (r.ok) this.received.push(r.value);
      for (const w of this.waiters.splice(0)) w();
    });
    ws.on('close', () => {
      this.closed = true;
      for (const w of this.waiters.splice(0)) w();
    });
  }

  static async connect(
    url: string,
    hello: Partial<Extract<WorkerMessage, { type: 'hello' }>> = {},
    token = WORKER_TOKEN,
  ): Promise<ScriptedWorker> {
    const ws = new WebSocket(url.replace(/^http/, 'ws') + WORKER_WS_PATH, {
      headers: { authorization: `Bearer ${token}` },
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
    const w = new ScriptedWorker(ws);
    w.send({
      type: 'hello',
      protocol: PROTOCOL_VERSION,
      workerId: 'w1',
      endpointId: 'echo',
      concurrency: 1,
      stream: true,
      inflight: [],
      ...hello,
    });
    return w;
  }

  send(msg: WorkerMessage | Record<string, unknown>): void {
    this.ws.send(JSON.stringify(msg));
  }

  /** Waits for the n-th (default: next unseen) message of a type, bounded by `timeoutMs`. */
  async next<T extends ServerMessage['type']>(type: T, timeoutMs = 5000): Promise<Extract<ServerMessage, { type: T }>> {
    const seen = this.consumed.get(type) ?? 0;
    const until = Date.now() + timeoutMs;
    for (;;) {
      const all = this.received.filter((m) => m.type === type);
      if (all.length > seen) {
        this.consumed.set(type, seen + 1);
        return all[seen] as Extract<ServerMessage, { type: T }>;
      }
      if (this.closed) throw new Error(`socket closed while waiting for ${type}`);
      const left = until - Date.now();
      if (left <= 0)
        throw new Error(`no ${type} within ${timeoutMs} ms; got ${JSON.stringify(this.received.map((m) => m.type))}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }
  private consumed = new Map<string, number>();

  count(type: ServerMessage['type']): number {
    return this.received.filter((m) => m.type === type).length;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const done = new Promise<void>((r) => this.ws.once('close', () => r()));
    this.ws.close();
    await done;
  }
}

/** Polls `fn` until it returns a truthy value, bounded. */
export async function until<T>(
  fn: () => Promise<T> | T,
  timeoutMs = 5000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Reads an SSE (or any streamed) response body: `until(needle)` reads on until the text so far contains it. */
export function bodyReader(res: Response): { until(needle: string): Promise<void>; readonly text: string } {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  return {
    async until(needle) {
      while (!text.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended early: ${text}`);
        text += dec.decode(value);
      }
    },
    get text() {
      return text;
    },
  };
}
