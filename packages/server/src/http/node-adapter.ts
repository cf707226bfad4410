import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { overloaded, type BodyBudget } from './body-budget.js';
import { ClientGone } from './client-gone.js';
import { jsonParts, type RawJson } from '../core/raw-json.js';
import { splitTarget } from './request-target.js';
import type { ApiRequest, ApiResponse } from './types.js';

/** Maps a node:http request onto the socket-free API and writes its answer (JSON or server-sent events). */
export function nodeHandler(
  handle: (req: ApiRequest) => Promise<ApiResponse>,
  track: { active: number },
  budget?: BodyBudget,
) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    track.active++;
    // Body bytes this request holds in the budget, given back once its answer is sent (or the client left).
    const held = { bytes: 0 };
    // The abort signal is made only for handlers that ask for it, and fires only when the client left before
    // the answer was sent: an AbortController and its DOMException per request were a visible share of the CPU,
    // and so was the AbortController itself for every /runsync (`ClientGone` is a plain object).
    let ac: ClientGone | undefined;
    let gone = false;
    res.on('close', () => {
      track.active--;
      budget?.give(held.bytes);
      gone = !res.writableFinished;
      if (gone) ac?.abort();
    });
    const target = splitTarget(req.url ?? '/');
    const raw = req.headers;
    // Node joins repeated request headers into one string except Set-Cookie: only then is a copy needed.
    const headers = raw['set-cookie'] === undefined ? (raw as Record<string, string | undefined>) : joined(raw);
    let query: URLSearchParams | undefined;
    const body = bodyOf(req, budget, held);
    const apiReq: ApiRequest = {
      method: req.method ?? 'GET',
      path: target.path,
      rawQuery: target.search,
      headers,
      body,
      arrived: () => {
        // A small body comes with its headers: once parsed it is in the request's buffer, taken in one read. (Node
        // marks the request complete only a turn of the event loop later; its Content-Length says sooner.)
        const declared = raw['content-length'];
        const whole = req.complete || (declared !== undefined && req.readableLength >= Number(declared));
        if (!whole || body.started) return undefined;
        const bytes = (req.read() as Buffer | null) ?? EMPTY;
        budget?.take(bytes.length);
        held.bytes += bytes.length;
        return bytes;
      },
      release: (bytes) => {
        const n = Math.min(bytes, held.bytes);
        held.bytes -= n;
        budget?.give(n);
      },
      // Parsed only when a route reads it.
      get query() {
        return (query ??= new URLSearchParams(target.search));
      },
      get signal() {
        ac ??= new ClientGone();
        if (gone) ac.abort();
        return ac;
      },
    };
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

const EMPTY = Buffer.alloc(0);

function joined(raw: IncomingMessage['headers']): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const k in raw) {
    const v = raw[k];
    headers[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return headers;
}

/** Received body bytes waiting for the reader past which the request is paused (TCP backpressure). */
const QUEUE_PAUSE_BYTES = 64 * 1024;

/** Past this many discarded bytes after a refused body, the connection is dropped. */
const MAX_DISCARD_BYTES = 32 * 1024 * 1024;

/**
 * The request body as an async iterable that, when the reader stops early (413), discards the rest instead of
 * destroying the socket, so the client reads its 413 rather than a broken pipe. Discarding is bounded.
 */
function bodyOf(
  req: IncomingMessage,
  budget: BodyBudget | undefined,
  held: { bytes: number },
): AsyncIterable<Uint8Array> & { started: boolean } {
  return {
    started: false,
    [Symbol.asyncIterator]() {
      this.started = true;
      const queue: Buffer[] = [];
      let queued = 0; // bytes in `queue`
      let paused = false;
      let ended = false;
      let failed: Error | undefined;
      let wake: (() => void) | undefined;
      const onData = (c: Buffer) => {
        try {
          budget?.take(c.length);
        } catch (err) {
          failed = err as Error; // 503 overloaded: what was received is dropped, the rest discarded
          queue.length = 0;
          discard();
          wake?.();
          return;
        }
        held.bytes += c.length;
        queue.push(c);
        queued += c.length;
        // Backpressure only past QUEUE_PAUSE_BYTES: pausing and resuming the request around every chunk cost a
        // visible share of the per-request CPU for the one-chunk bodies most requests have.
        if (queued > QUEUE_PAUSE_BYTES && !paused) {
          paused = true;
          req.pause();
        }
        wake?.();
      };
      const discard = () => {
        req.off('data', onData);
        let discarded = 0;
        req.on('data', (c: Buffer) => {
          discarded += c.length;
          if (discarded > MAX_DISCARD_BYTES) req.socket.destroy();
        });
        req.resume();
      };
      const onEnd = () => {
        ended = true;
        wake?.();
      };
      const onError = (e: Error) => {
        failed = e;
        wake?.();
      };
      req.on('data', onData).on('end', onEnd).on('error', onError);
      // A declared body that cannot fit the budget is refused before any of it is read.
      const declared = Number(req.headers['content-length'] ?? 0);
      if (budget && declared > budget.limit - budget.inFlight) {
        failed = overloaded(budget.limit);
        discard();
      }
      return {
        async next(): Promise<IteratorResult<Uint8Array>> {
          for (;;) {
            if (failed) throw failed;
            const c = queue.shift();
            if (c) {
              queued -= c.length;
              return { done: false, value: c };
            }
            if (ended) return { done: true, value: undefined };
            if (paused) {
              paused = false;
              req.resume();
            }
            await new Promise<void>((r) => (wake = r));
            wake = undefined;
          }
        },
        async return(): Promise<IteratorResult<Uint8Array>> {
          discard();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

async function write(res: ServerResponse, out: ApiResponse): Promise<void> {
  if (res.destroyed) return;
  if ('json' in out) {
    // A big output or input kept as received (`RawJson`) is spliced in as its bytes; one kept in a blob file is
    // streamed from the file around the envelope (issue #35).
    const parts = jsonParts(out.json);
    const streamed = typeof parts !== 'string' && parts.some((p) => !Buffer.isBuffer(p) && p.pieces() !== undefined);
    if (streamed) {
      const length = parts.reduce((n, p) => n + p.length, 0);
      const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(length) };
      return pipe(res, out.status, { ...headers, ...out.headers }, pieces(parts));
    }
    // Pieces written one after another, not joined: a value kept as bytes goes out without a copy.
    const body = typeof parts === 'string' ? [parts] : parts.map((p) => (Buffer.isBuffer(p) ? p : p.bytes()));
    res.writeHead(out.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': body.reduce((n, b) => n + Buffer.byteLength(b), 0),
      ...out.headers,
    });
    if (body.length === 1) return void res.end(body[0]);
    res.cork();
    for (const b of body) res.write(b);
    res.end();
    return;
  }
  if ('bytes' in out) {
    res.writeHead(out.status, { 'content-length': out.bytes.byteLength, ...out.headers });
    res.end(out.bytes);
    return;
  }
  if ('stream' in out)
    return pipe(res, out.status, { 'content-length': String(out.length), ...out.headers }, out.stream);
  if ('piped' in out) {
    const headers = out.setCookie ? { ...out.headers, 'set-cookie': out.setCookie } : (out.headers ?? {});
    return pipe(res, out.status, headers, out.piped, true);
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

/** Writes pieces as the client takes them (backpressure): one piece in memory at a time. */
async function pipe(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  body: AsyncIterable<Uint8Array>,
  flush = false,
): Promise<void> {
  res.writeHead(status, headers);
  // A proxied answer's headers go at once (a server-sent event stream may wait before its first event).
  if (flush) res.flushHeaders();
  const it = body[Symbol.asyncIterator]();
  try {
    for (;;) {
      if (res.destroyed) return;
      const next = await it.next();
      if (next.done) break;
      if (!res.write(next.value)) await drained(res);
    }
    res.end();
  } catch (err) {
    res.destroy(err as Error); // the headers are gone: cut the connection so the client sees a short body
  } finally {
    await it.return?.();
  }
}

/** The pieces of an answer: buffers as they are, values kept in files read a piece at a time. */
async function* pieces(parts: (Buffer | RawJson)[]): AsyncIterable<Uint8Array> {
  for (const p of parts) {
    if (Buffer.isBuffer(p)) yield p;
    else yield* p.pieces() ?? [p.bytes()];
  }
}

/** Resolves when the response can take more (or is closed), leaving no listener behind. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}
