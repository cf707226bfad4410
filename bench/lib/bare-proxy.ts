/**
 * The reference proxy of bench/lb-proxy.ts: a bare `node:http` reverse proxy (no key check, no limits, no metrics),
 * a keep-alive Agent to the worker and the bodies piped both ways. What any Node proxy hop costs on this machine,
 * against which Berth's own per-request cost is read (Berth / bare proxy).
 */
import { Agent, createServer, request, type Server } from 'node:http';

export function startBareProxy(upstreamPort: number, onListening: (port: number) => void): Server {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const server = createServer((req, res) => {
    const up = request(
      { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(up);
  });
  server.listen(0, '127.0.0.1', () => {
    const a = server.address();
    onListening(typeof a === 'object' && a ? a.port : 0);
  });
  return server;
}
