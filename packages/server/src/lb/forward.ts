import { request, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { BerthError } from '@berth/protocol';
import type { ApiRequest } from '../http/types.js';
import type { LbWorker } from './balancer.js';

/** Hop-by-hop headers (RFC 9110 7.6.1) and what the worker must never see (the caller's API key). */
const DROPPED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'authorization',
  'x-runpod-worker-id',
]);

/** Bodies up to this size (declared by Content-Length) are sent in one write; larger ones stream. */
const ONE_WRITE_BYTES = 64 * 1024;

/**
 * The header names a `Connection` value lists (hop-by-hop too). The usual `keep-alive` and `close` are answered
 * without splitting: `keep-alive` is dropped anyway, and a header named `close` is checked by name.
 */
function namedBy(connection: string | undefined): readonly string[] | undefined {
  if (connection === undefined) return undefined;
  if (connection === 'keep-alive' || connection === 'Keep-Alive') return KEEP_ALIVE;
  if (connection === 'close' || connection === 'Close') return CLOSE;
  return connection
    .toLowerCase()
    .split(',')
    .map((s) => s.trim());
}
const KEEP_ALIVE = ['keep-alive'];
const CLOSE = ['close'];

/** The request's headers for the worker: hop-by-hop ones, those named by `Connection`, and the API key removed. */
export function upstreamHeaders(h: ApiRequest['headers']): OutgoingHttpHeaders {
  const named = namedBy(h['connection']);
  const out: OutgoingHttpHeaders = {};
  for (const k in h) {
    const v = h[k];
    if (v === undefined || DROPPED.has(k) || named?.includes(k)) continue;
    out[k] = v;
  }
  if (h['host'] !== undefined) out['x-forwarded-host'] = h['host'];
  return out;
}

/** The worker's answer headers for the client: hop-by-hop ones removed (Node frames the body itself). */
export function downstreamHeaders(res: IncomingMessage): { headers: Record<string, string>; setCookie?: string[] } {
  const h = res.headers;
  const named = namedBy(h['connection']);
  const headers: Record<string, string> = {};
  let setCookie: string[] | undefined;
  for (const k in h) {
    const v = h[k];
    if (v === undefined || (DROPPED.has(k) && k !== 'authorization') || named?.includes(k)) continue;
    if (k === 'set-cookie') setCookie = v as string[];
    else headers[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return setCookie ? { headers, setCookie } : { headers };
}

export interface Forwarded {
  res: IncomingMessage;
  req: ClientRequest;
}

/**
 * Sends the request to the worker (`path` with its query as received) and resolves with the worker's answer once
 * its headers arrive. The body streams with back-pressure and the limit counted as it goes (413
 * `payload_too_large`); a connection that fails or closes before the answer is 502 `worker_lost`. `abort` destroys
 * the request (client gone, timeout) and settles with that error.
 */
export function forward(
  req: ApiRequest,
  w: LbWorker,
  target: string,
  maxBodyBytes: number,
): { answer: Promise<Forwarded>; abort: (err: Error) => void } {
  let fail!: (err: Error) => void;
  let upstream: ClientRequest | undefined;
  const answer = new Promise<Forwarded>((resolve, reject) => {
    let settled = false;
    fail = (err) => {
      if (settled) return;
      settled = true;
      upstream?.destroy();
      reject(err);
    };
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > maxBodyBytes) return fail(tooLarge(maxBodyBytes));
    const ureq = request({
      host: w.host,
      port: w.port,
      method: req.method,
      path: target,
      headers: upstreamHeaders(req.headers),
      agent: w.agent,
    });
    upstream = ureq;
    ureq.on('response', (res) => {
      if (settled) return void res.destroy();
      settled = true;
      resolve({ res, req: ureq });
    });
    ureq.on('error', (e: NodeJS.ErrnoException) =>
      fail(
        new BerthError(
          'worker_lost',
          `worker ${w.id} closed the connection before answering (${e.code ?? e.message})`,
          {
            workerId: w.id,
          },
        ),
      ),
    );
    sendBody(req, ureq, maxBodyBytes, declared !== undefined && Number(declared) <= ONE_WRITE_BYTES).catch(fail);
  });
  return { answer, abort: (err) => fail(err) };
}

async function sendBody(req: ApiRequest, ureq: ClientRequest, max: number, small: boolean): Promise<void> {
  const body = req.body;
  if (body === undefined) return void ureq.end();
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    if (bytes.byteLength > max) throw tooLarge(max);
    return void ureq.end(bytes);
  }
  let n = 0;
  if (small && req.arrived) {
    // The request's handler may run while its headers are parsed, before the body that came with them: once the
    // parse is over (a microtask later), a small body already received goes out with the headers in one write,
    // without the asynchronous read below.
    await Promise.resolve();
    const whole = req.arrived();
    if (whole !== undefined) {
      if (whole.byteLength > max) throw tooLarge(max);
      ureq.end(whole);
      req.release?.(whole.byteLength);
      return;
    }
  }
  if (small) {
    const parts: Uint8Array[] = [];
    for await (const c of body) {
      n += c.byteLength;
      if (n > max) throw tooLarge(max);
      parts.push(c);
    }
    ureq.end(parts.length === 1 ? parts[0] : Buffer.concat(parts));
    req.release?.(n);
    return;
  }
  for await (const c of body) {
    n += c.byteLength;
    if (n > max) throw tooLarge(max);
    if (ureq.destroyed) return;
    const more = ureq.write(c);
    req.release?.(c.byteLength);
    if (!more) await new Promise<void>((r) => ureq.once('drain', r).once('close', r));
  }
  ureq.end();
}

function tooLarge(max: number): BerthError {
  return new BerthError('payload_too_large', `the request body passed ${max} bytes (maxBodyBytes of this endpoint)`, {
    limit: max,
  });
}
