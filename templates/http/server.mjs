// A load-balancing worker in plain Node (no dependencies): the shape of RunPod's worker-load-balancing template.
//   GET  /ping      200 when ready, 204 while the model loads (on PORT_HEALTH, which defaults to PORT)
//   POST /generate  {"prompt": "..."} -> {"generated_text": "...", "input": <what was sent>, "worker": <id>}
//   GET  /stats     requests served by this process
// Replace loadModel() with your model.
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

const MAX_BODY = 1024 * 1024;

export async function loadModel(initMs) {
  await new Promise((r) => setTimeout(r, initMs));
  return { generate: (prompt) => `Generated text for: ${prompt}` };
}

function send(res, status, body) {
  if (body === undefined) return void res.writeHead(status).end();
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(Object.assign(new Error(`body over ${MAX_BODY} bytes`), { status: 413 }));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'));
      } catch {
        reject(Object.assign(new Error('body is not JSON'), { status: 400 }));
      }
    });
    req.on('error', reject);
  });
}

/**
 * Starts the worker: `port` serves requests and /ping; `healthPort`, when given, a second server with /ping alone.
 * `load` loads the model (default: loadModel(initMs)). Resolves once listening with the bound ports and `close()`.
 */
export async function start({ port = 0, healthPort, initMs = 0, worker = '', load = () => loadModel(initMs) } = {}) {
  const state = { model: undefined, requests: 0 };
  const ping = (res) => send(res, state.model ? 200 : 204);
  const server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/ping' && req.method === 'GET') return ping(res);
    if (path === '/stats' && req.method === 'GET') return send(res, 200, { requests: state.requests, worker });
    if (path !== '/generate') return send(res, 404, { error: `no route ${req.method} ${path}` });
    if (req.method !== 'POST') return send(res, 405, { error: 'POST /generate' });
    if (!state.model) return send(res, 503, { error: 'the model is still loading' });
    try {
      const input = await readJson(req);
      if (typeof input?.prompt !== 'string') return send(res, 400, { error: 'expected {"prompt": "<text>"}' });
      state.requests++;
      send(res, 200, { generated_text: state.model.generate(input.prompt), input, worker });
    } catch (err) {
      send(res, err.status ?? 500, { error: err.message });
    }
  });
  const listen = (srv, p) =>
    new Promise((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(p, process.env.HOST ?? '0.0.0.0', () => resolve(srv.address().port));
    });
  const bound = await listen(server, port);
  const servers = [server];
  let boundHealth = bound;
  if (healthPort !== undefined) {
    const health = createServer((req, res) =>
      req.url === '/ping' ? ping(res) : send(res, 404, { error: 'only /ping here' }),
    );
    boundHealth = await listen(health, healthPort);
    servers.push(health);
  }
  load().then((m) => {
    state.model = m;
  });
  const close = () => Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return { port: bound, healthPort: boundHealth, close };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.PORT ?? 8080);
  const health = Number(process.env.PORT_HEALTH || port);
  const { close } = await start({
    port,
    healthPort: health === port ? undefined : health,
    initMs: Number(process.env.INIT_MS ?? 200),
    worker: process.env.RUNPOD_POD_ID ?? '',
  });
  console.log(`listening on ${port} (health on ${health})`);
  const stop = () => close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
