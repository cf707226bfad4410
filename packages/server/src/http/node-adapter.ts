import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiRequest, ApiResponse } from './types.js';

/** Maps a node:http request onto the socket-free API and writes its answer (JSON or server-sent events). */
export function nodeHandler(handle: (req: ApiRequest) => Promise<ApiResponse>, track: { active: number }) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    track.active++;
    const ac = new AbortController();
    res.on('close', () => {
      track.active--;
      ac.abort();
    });
    const url = new URL(req.url ?? '/', 'http://localhost');
    const headers: Record<string, string | undefined> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const apiReq: ApiRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers, body: req, signal: ac.signal };
    handle(apiReq)
      .then((out) => write(res, out))
      .catch(() => {
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end('{"error":"internal error","code":"internal_error"}');
        } else res.destroy();
      });
  };
}

async function write(res: ServerResponse, out: ApiResponse): Promise<void> {
  if (res.destroyed) return;
  if ('json' in out) {
    const body = JSON.stringify(out.json);
    res.writeHead(out.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...out.headers });
    res.end(body);
    return;
  }
  res.writeHead(out.status, { ...out.headers });
  res.flushHeaders();
  const it = out.events[Symbol.asyncIterator]();
  try {
    for (;;) {
      if (res.destroyed) break;
      const next = await it.next();
      if (next.done) break;
      if (!res.write(next.value)) await new Promise<void>((r) => res.once('drain', r).once('close', r));
    }
  } finally {
    await it.return?.();
    res.end();
  }
}
