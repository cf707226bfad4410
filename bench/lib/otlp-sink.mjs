// A local OTLP/HTTP receiver for the tracing rows (targets/berth/observe.ts): answers every POST /v1/traces with
// 200 {} after reading the body, counts the requests and bytes (printed on SIGTERM). Usage: node otlp-sink.mjs <port>
import { createServer } from 'node:http';

let requests = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on('data', (c) => (bytes += c.length));
  req.on('end', () => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.listen(Number(process.argv[2]), '127.0.0.1', () => console.log('otlp sink listening'));
process.on('SIGTERM', () => {
  console.log(`otlp sink: ${requests} exports, ${bytes} bytes`);
  process.exit(0);
});
