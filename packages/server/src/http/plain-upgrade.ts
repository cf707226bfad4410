import type { IncomingMessage, Server } from 'node:http';
import { Duplex } from 'node:stream';

/** Hop-by-hop headers of an upgrade offer, dropped when the request is served as plain HTTP/1.1. */
const UPGRADE_HEADERS = new Set(['upgrade', 'http2-settings']);

/**
 * Serves a request that offered an upgrade (`Upgrade: h2c` from `curl --http2`, a WebSocket dial to a route that
 * is not the worker socket) as the plain HTTP/1.1 request it also is. node:http hands every such request to the
 * `upgrade` listener; this declines the offer (RFC 9110 section 7.8: a server may ignore Upgrade) by replaying
 * the request head without the upgrade headers, then the rest of the connection, into the same server as a new
 * connection. Keep-alive, body limits and timeouts then apply as for any request.
 */
export function serveWithoutUpgrade(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/${req.httpVersion}`];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    let value = req.rawHeaders[i + 1]!;
    const lower = name.toLowerCase();
    if (UPGRADE_HEADERS.has(lower)) continue;
    if (lower === 'connection') {
      value = value
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== '' && !UPGRADE_HEADERS.has(t.toLowerCase()))
        .join(', ');
      if (value === '') continue;
    }
    lines.push(`${name}: ${value}`);
  }
  const conn = connectionOver(socket);
  conn.push(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'));
  if (head.length > 0) conn.push(head);
  server.emit('connection', conn);
}

/** A Duplex over `socket` (reads flow with backpressure, writes and end go to it). */
function connectionOver(socket: Duplex): Duplex {
  const conn = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk, encoding, cb) {
      socket.write(chunk, encoding, cb);
    },
    final(cb) {
      socket.end(cb);
    },
    destroy(err, cb) {
      socket.destroy(err ?? undefined);
      cb(err);
    },
  });
  socket.on('data', (d: Buffer) => {
    if (!conn.push(d)) socket.pause();
  });
  socket.on('end', () => conn.push(null));
  socket.on('error', (err) => conn.destroy(err));
  socket.on('close', () => conn.destroy());
  return conn;
}
