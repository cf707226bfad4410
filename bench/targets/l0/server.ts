// L0, the HTTP limit: a raw node:http JSON echo. POST /v2/<ep>/runsync {input} -> {id, status: COMPLETED, output}.
import http from 'node:http';
import { echo } from '../../lib/noop.js';

let next = 0;
const server = http.createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (d: Buffer) => parts.push(d));
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url?.split('?')[0]?.endsWith('/runsync')) {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(parts).toString()) as { input: unknown };
    const out = JSON.stringify({ id: `l0-${++next}`, status: 'COMPLETED', output: echo(body.input) });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) }).end(out);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env['PORT']), '127.0.0.1', () => process.stdout.write('listening\n'));
