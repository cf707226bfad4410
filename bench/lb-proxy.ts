// Load-balancing proxy benchmark (issue #39): a small JSON POST through `/v2/<ep>/lb/<path>` against the worker's
// own server called directly, at c=1 (p50 added latency) and c=50 (throughput ratio); a streamed answer's
// time-to-first-byte through the proxy minus direct; and, under `berth dev`, the first request from zero minus the
// worker's boot. Three processes: the worker, the control plane, and this one (the load). Prints figures.
//   node --import tsx bench/lb-proxy.ts [--seconds 5] [--rounds 3]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const KEY = 'berth_lbbench00000000000000000';
const SELF = fileURLToPath(import.meta.url);
const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};

/** The worker: /ping, /generate (small JSON echo), /stream (first chunk at once, then two more). */
function runWorker(): void {
  createServer((req, res) => {
    if (req.url === '/ping') return void res.writeHead(200).end();
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 0\n\n');
      setTimeout(() => res.end('data: 1\n\n'), 5);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"generated_text":${JSON.stringify(body)}}`);
    });
  }).listen(Number(process.env.PORT ?? 0), '127.0.0.1', function (this: ReturnType<typeof createServer>) {
    const a = this.address();
    console.log(`PORT ${typeof a === 'object' && a ? a.port : 0}`);
  });
}

/** The control plane with one load-balancing endpoint whose worker is at `workerPort`. */
async function runServer(workerPort: number): Promise<void> {
  const { createServer: createBerth } = await import('@berth/server');
  const server = createBerth({
    apiKeys: [KEY],
    lb: { gen: { concurrency: 1000 } },
    rateLimits: { enabled: false },
  });
  const { port } = await server.listen({ port: 0 });
  server.lb.add('gen', 'gen-1', { host: '127.0.0.1', port: workerPort, healthPort: workerPort });
  while (server.lb.connected('gen').length === 0) await new Promise((r) => setTimeout(r, 20));
  process.on('SIGINT', () => process.exit(0)); // a --cpu-prof run writes its profile
  console.log(`PORT ${port}`);
}

function child(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', SELF, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => {
      const m = /PORT (\d+)/.exec(d.toString());
      if (m) resolve({ proc, port: Number(m[1]) });
    });
    proc.on('exit', (code) => reject(new Error(`child ${args[0]} exited with ${code}`)));
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const BODY = JSON.stringify({ prompt: 'Hello, world!', max_tokens: 16 });

/** One request: ms to the whole answer, and to the first body byte. */
function once(port: number, path: string, method = 'POST'): Promise<{ total: number; ttfb: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    let ttfb = 0;
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        agent,
        headers: {
          authorization: `Bearer ${KEY}`,
          'content-type': 'application/json',
          'content-length': method === 'POST' ? Buffer.byteLength(BODY) : 0,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => {
          if (ttfb === 0) ttfb = performance.now() - t0;
          if (res.statusCode !== 200) text += d.toString();
        });
        res.on('end', () =>
          res.statusCode === 200
            ? resolve({ total: performance.now() - t0, ttfb })
            : reject(new Error(`${method} ${path}: status ${res.statusCode} ${text}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? BODY : undefined);
  });
}

async function load(
  port: number,
  path: string,
  c: number,
  seconds: number,
): Promise<{ rps: number; p50: number; p99: number }> {
  const lat: number[] = [];
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (performance.now() < end) lat.push((await once(port, path)).total);
    }),
  );
  lat.sort((a, b) => a - b);
  return { rps: lat.length / seconds, p50: q(lat, 0.5), p99: q(lat, 0.99) };
}

const q = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
const f = (n: number, d = 3) => n.toFixed(d);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function ttfb(port: number, path: string, n: number): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) xs.push((await once(port, path, 'GET')).ttfb);
  return median(xs);
}

/** Under `berth dev`: the first request from zero workers, and the worker's own start to its first /ping 200. */
async function fromZero(): Promise<{ firstMs: number; readyMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-lb-bench-'));
  const config = join(dir, 'berth.config.json');
  // The worker as plain JavaScript (no loader): what it costs to boot is the worker's, not tsx's.
  writeFileSync(
    join(dir, 'worker.mjs'),
    `import { createServer } from 'node:http';\ncreateServer((req, res) => { if (req.url === '/ping') return void res.writeHead(200).end(); req.resume(); req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')); }).listen(Number(process.env.PORT), '127.0.0.1');\n`,
  );
  writeFileSync(
    config,
    JSON.stringify({ endpoints: { gen: { type: 'http', command: 'node worker.mjs', maxWorkers: 1 } } }),
  );
  const bin = fileURLToPath(new URL('../packages/cli/dist/bin.js', import.meta.url));
  const dev = spawn(process.execPath, [bin, 'dev', '--config', config, '--port', '0', '--store', 'memory'], {
    env: { ...process.env, BERTH_API_KEY: KEY, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  dev.stdout!.on('data', (d: Buffer) => void (out += d.toString()));
  try {
    while (!/ready at http:\/\/127\.0\.0\.1:(\d+)/.test(out)) await new Promise((r) => setTimeout(r, 20));
    const port = Number(/ready at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]);
    const { total } = await once(port, '/v2/gen/lb/generate');
    while (!/ready \(\/ping 200 after (\d+) ms\)/.test(out)) await new Promise((r) => setTimeout(r, 20));
    return { firstMs: total, readyMs: Number(/ready \(\/ping 200 after (\d+) ms\)/.exec(out)![1]) };
  } finally {
    dev.kill('SIGTERM');
    await new Promise((r) => dev.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const seconds = arg('seconds', 5);
  const rounds = arg('rounds', 3);
  const worker = await child(['worker']);
  const server = await child(['server', String(worker.port)]);
  const direct = worker.port;
  const proxy = server.port;
  try {
    // Warm both paths.
    await load(direct, '/generate', 8, 1);
    await load(proxy, '/v2/gen/lb/generate', 8, 1);
    const c1: { d: number; p: number }[] = [];
    const c50: { d: number; p: number }[] = [];
    for (let r = 0; r < rounds; r++) {
      const d1 = await load(direct, '/generate', 1, seconds);
      const p1 = await load(proxy, '/v2/gen/lb/generate', 1, seconds);
      const d50 = await load(direct, '/generate', 50, seconds);
      const p50 = await load(proxy, '/v2/gen/lb/generate', 50, seconds);
      c1.push({ d: d1.p50, p: p1.p50 });
      c50.push({ d: d50.rps, p: p50.rps });
      console.log(
        `round ${r + 1}: c=1 p50 direct ${f(d1.p50)} ms, proxy ${f(p1.p50)} ms (+${f(p1.p50 - d1.p50)}); ` +
          `c=50 direct ${f(d50.rps, 0)} req/s, proxy ${f(p50.rps, 0)} req/s (${f(p50.rps / d50.rps, 2)}x), p99 ${f(d50.p99, 1)} / ${f(p50.p99, 1)} ms`,
      );
    }
    const t: number[] = [];
    for (let r = 0; r < rounds; r++)
      t.push((await ttfb(proxy, '/v2/gen/lb/stream', 300)) - (await ttfb(direct, '/stream', 300)));
    const added = median(c1.map((x) => x.p - x.d));
    const ratio = median(c50.map((x) => x.p / x.d));
    console.log(`\nc=1 added latency p50 (median of ${rounds} rounds): ${f(added)} ms (goal <= 1 ms)`);
    console.log(`c=50 throughput through the proxy / direct (median): ${f(ratio, 2)}x (goal >= 0.8x)`);
    console.log(
      `streamed TTFB through the proxy minus direct (median of ${rounds} x 300): ${f(median(t))} ms (goal <= 2 ms)`,
    );
  } finally {
    server.proc.kill();
    worker.proc.kill();
  }
  const z = await fromZero();
  console.log(
    `from zero (berth dev, Node worker): first request ${f(z.firstMs, 0)} ms, worker launch to /ping 200 ${z.readyMs} ms, difference ${f(z.firstMs - z.readyMs, 0)} ms (goal <= 300 ms)`,
  );
  agent.destroy();
}

const mode = process.argv[2];
if (mode === 'worker') runWorker();
else if (mode === 'server') void runServer(Number(process.argv[3]));
else await main();
