import type { HelloMessage } from '@berth/protocol';
import { silentLogger } from '@berth/protocol/log';
import { createServer, type BerthServer } from './server.js';
import type { ServerOptions } from './options.js';
import { ScriptedWorker as PublicScriptedWorker } from './testing/scripted-worker.js';

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
 * `@berth/server/testing`'s `ScriptedWorker`, connecting with this file's worker token and, unless told otherwise,
 * as worker `w1` of endpoint `echo`.
 */
export const ScriptedWorker = {
  connect: (url: string, hello: Partial<HelloMessage> = {}, token = WORKER_TOKEN): Promise<ScriptedWorker> =>
    PublicScriptedWorker.connect(url, token, { workerId: 'w1', endpointId: 'echo', ...hello }),
};
export type ScriptedWorker = PublicScriptedWorker;

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
