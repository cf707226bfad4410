import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorCode } from '@berth/protocol';
import { ConfigError } from '../errors.js';

/** `httpTimeouts` of `createServer`: how long a client may take to send a request (not how long we answer). */
export interface HttpTimeouts {
  /** ms to receive the request line and headers (slow-header clients get 408). Default: 20000. */
  headersMs?: number;
  /**
   * ms to receive the whole request, body included (slow-body clients get 408). Answering is not counted, so a
   * `/runsync` that waits 300 s is unaffected. Default: 300000 (a 20 MB body at 70 KB/s).
   */
  requestMs?: number;
  /** ms an idle keep-alive connection stays open; above the 60 s idle timeout of common load balancers. Default: 65000. */
  keepAliveMs?: number;
}

export type ResolvedHttpTimeouts = Required<HttpTimeouts>;

export function resolveHttpTimeouts(o: HttpTimeouts = {}): ResolvedHttpTimeouts {
  const t = {
    headersMs: o.headersMs ?? 20_000,
    requestMs: o.requestMs ?? 300_000,
    keepAliveMs: o.keepAliveMs ?? 65_000,
  };
  for (const [k, v] of Object.entries(t)) {
    if (!Number.isFinite(v) || v <= 0)
      throw new ConfigError(`option httpTimeouts.${k} must be a positive number of ms, got ${String(v)}`);
  }
  if (t.headersMs > t.requestMs)
    throw new ConfigError(`option httpTimeouts.headersMs (${t.headersMs}) must not exceed requestMs (${t.requestMs})`);
  return t;
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
};

/** The coded answer to a request Node could not parse or that took too long to arrive. */
function clientErrorReply(err: NodeJS.ErrnoException): { status: number; code: ErrorCode; message: string } {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { status: 408, code: 'request_timeout', message: 'the request (headers or body) did not arrive in time' };
  if (err.code === 'HPE_HEADER_OVERFLOW')
    return { status: 431, code: 'headers_too_large', message: 'request headers are larger than 16 KB' };
  return { status: 400, code: 'bad_http_request', message: `malformed HTTP request (${err.code ?? 'parse error'})` };
}

/**
 * The node:http server of the control plane with deliberate limits: headers and whole-request timeouts checked
 * every second, a keep-alive timeout above load balancers' idle timeout, and malformed or too slow requests
 * answered with a coded JSON error (400 `bad_http_request`, 408 `request_timeout`, 431 `headers_too_large`)
 * before the connection is closed, instead of a silent reset.
 */
export function createNodeServer(handler: RequestListener, timeouts: ResolvedHttpTimeouts): Server {
  const options = {
    connectionsCheckingInterval: Math.min(1000, timeouts.headersMs),
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    requireHostHeader: false, // checked below, to answer with a coded error instead of Node's bare 400
  };
  const server = createServer(options, (req, res) => {
    if (req.headers.host === undefined && req.httpVersion === '1.1') {
      const body = JSON.stringify({
        error: 'HTTP/1.1 requests need a Host header',
        code: 'bad_http_request' satisfies ErrorCode,
      });
      res
        .writeHead(400, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(body),
          connection: 'close',
        })
        .end(body);
      return;
    }
    handler(req, res);
  });
  server.keepAliveTimeout = timeouts.keepAliveMs;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || err.code === 'HPE_INVALID_EOF_STATE' || !socket.writable)
      return void socket.destroy();
    // Bytes after a request that said `Connection: close`: that request is still being answered on this socket,
    // and the connection closes after it; writing another answer would interleave with it.
    if (err.code === 'HPE_CLOSED_CONNECTION' && (socket as { _httpMessage?: unknown })._httpMessage) return;
    const r = clientErrorReply(err);
    const body = JSON.stringify({ error: r.message, code: r.code });
    socket.end(
      `HTTP/1.1 ${r.status} ${REASONS[r.status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    socket.destroySoon?.();
  });
  return server;
}
