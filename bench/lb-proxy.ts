// Load-balancing proxy benchmark (issue #39): a small JSON POST through `/v2/<ep>/lb/<path>` against the worker's
// own server called directly and through a bare `node:http` reverse proxy (lib/bare-proxy.ts: what any proxy hop
// costs here), at c=1 (p50 added latency) and c=50 (throughput ratios, the proxies' CPU ms per request); a streamed
// answer's time-to-first-byte through the proxy minus direct; and, under `berth dev`, the first request from zero
// minus the worker's boot. Processes: the worker, the bare proxy, the control plane, this one (the load); the
// rows take turns, one load at a time. Prints figures per round with the load average.
//   node --import tsx bench/lb-proxy.ts [--seconds 5] [--rounds 3] [--concurrency 1000] [--profile <dir>] [--no-zero]
// --profile writes the V8 CPU profiles of the control plane and the bare proxy to <dir> (bench/profile-summary.ts reads it);
// BENCH_BERTH_BASELINE=<another checkout, built> adds a `Berth@base` row: that checkout's control plane.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startBareProxy } from './lib/bare-proxy.js';
import { cpuMs } from './lib/proc.js';

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

/** The control plane with one load-balancing endpoint whose worker is at `workerPort`; `base`: another checkout's. */
async function runServer(workerPort: number, concurrency: number, base: string | undefined): Promise<void> {
  const mod = base ? pathToFileURL(join(base, 'packages/server/dist/index.js')).href : '@berth/server';
  const { createServer: createBerth } = (await import(mod)) as typeof import('@berth/server');
  const server = createBerth({
    apiKeys: [KEY],
    lb: { gen: { concurrency } },
    rateLimits: { enabled: false },
  });
  const { port } = await server.listen({ port: 0 });
  server.lb.add('gen', 'gen-1', { host: '127.0.0.1', port: workerPort, healthPort: workerPort });
  while (server.lb.connected('gen').length === 0) await new Promise((r) => setTimeout(r, 20));
  process.on('SIGINT', () => process.exit(0)); // a --cpu-prof run writes its profile
  console.log(`PORT ${port}`);
}

function child(args: string[], node: string[] = []): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(process.execPath, [...node, '--import', 'tsx', SELF, ...args], {
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

interface Row {
  name: string;
  port: number;
  path: string;
  /** The proxy's process (its CPU time per request is read); none for the worker called directly. */
  pid: number | undefined;
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function main(): Promise<void> {
  const seconds = arg('seconds', 5);
  const rounds = arg('rounds', 3);
  const profile = process.argv.includes('--profile') ? process.argv[process.argv.indexOf('--profile') + 1] : undefined;
  const base = process.env['BENCH_BERTH_BASELINE'];
  const worker = await child(['worker']);
  const prof = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  const bare = await child(['bare', String(worker.port)], prof);
  // Requests the worker gets at once from Berth: 1000 (none wait), or `--concurrency 1` (the default, RunPod's).
  const concurrency = String(arg('concurrency', 1000));
  const server = await child(['server', String(worker.port), concurrency], prof);
  const baseServer = base ? await child(['server', String(worker.port), concurrency, base]) : undefined;
  const lb = '/v2/gen/lb/generate';
  const rows: Row[] = [
    { name: 'direct', port: worker.port, path: '/generate', pid: undefined },
    { name: 'bare proxy', port: bare.port, path: '/generate', pid: bare.proc.pid },
    { name: 'Berth', port: server.port, path: lb, pid: server.proc.pid },
    ...(baseServer ? [{ name: 'Berth@base', port: baseServer.port, path: lb, pid: baseServer.proc.pid }] : []),
  ];
  const c1 = new Map<string, number[]>(rows.map((r) => [r.name, []]));
  const c50 = new Map<string, number[]>(rows.map((r) => [r.name, []]));
  const cpu = new Map<string, number[]>(rows.map((r) => [r.name, []]));
  const loads: string[] = [];
  try {
    for (const r of rows) await load(r.port, r.path, 8, 1); // warm every path
    for (let round = 0; round < rounds; round++) {
      // Each round starts at another row, so a drift of the machine's load does not always favour the same one.
      const order = rows.map((_, i) => rows[(i + round) % rows.length]!);
      for (const r of order) c1.get(r.name)!.push((await load(r.port, r.path, 1, seconds)).p50);
      for (const r of order) {
        const before = r.pid ? cpuMs(r.pid) : 0;
        const x = await load(r.port, r.path, 50, seconds);
        c50.get(r.name)!.push(x.rps);
        if (r.pid) cpu.get(r.name)!.push((cpuMs(r.pid) - before) / (x.rps * seconds));
      }
      loads.push(loadavg());
      const d1 = c1.get('direct')![round]!;
      const d50 = c50.get('direct')![round]!;
      const b50 = c50.get('bare proxy')![round]!;
      const line = (r: Row) => {
        const p1 = c1.get(r.name)![round]!;
        const p50 = c50.get(r.name)![round]!;
        if (!r.pid) return `direct: c=1 p50 ${f(d1)} ms, c=50 ${f(d50, 0)} req/s`;
        const ofBare = r.name === 'bare proxy' ? '' : `, ${f(p50 / b50, 2)}x of bare`;
        return `${r.name}: c=1 p50 ${f(p1)} ms (+${f(p1 - d1)}), c=50 ${f(p50, 0)} req/s (${f(p50 / d50, 2)}x${ofBare}), proxy CPU ${f(cpu.get(r.name)![round]!)} ms/request`;
      };
      console.log(`round ${round + 1} (load average ${loads[round]}):\n  ${rows.map(line).join('\n  ')}`);
    }
    const med = (name: string, of: Map<string, number[]>, by?: string) =>
      median(of.get(name)!.map((x, i) => (by ? x / of.get(by)![i]! : x)));
    const added = (name: string) => median(c1.get(name)!.map((x, i) => x - c1.get('direct')![i]!));
    console.log(`\nmedians of ${rounds} rounds of ${seconds} s (load average per round: ${loads.join('; ')}):`);
    for (const r of rows.slice(1))
      console.log(
        `  ${r.name}: c=1 added p50 ${f(added(r.name))} ms (goal <= 1 ms); c=50 ${f(med(r.name, c50, 'direct'), 2)}x direct (goal >= 0.8x)` +
          (r.name === 'bare proxy' ? '' : `, ${f(med(r.name, c50, 'bare proxy'), 2)}x of the bare proxy`) +
          `; proxy CPU ${f(med(r.name, cpu))} ms/request`,
      );
    for (const r of rows.slice(2)) {
      const t: number[] = [];
      for (let i = 0; i < rounds; i++)
        t.push((await ttfb(r.port, '/v2/gen/lb/stream', 300)) - (await ttfb(worker.port, '/stream', 300)));
      console.log(
        `  ${r.name}: streamed TTFB minus direct (median of ${rounds} x 300): ${f(median(t))} ms (goal <= 2 ms)`,
      );
    }
  } finally {
    server.proc.kill(profile ? 'SIGINT' : 'SIGTERM');
    baseServer?.proc.kill();
    bare.proc.kill(profile ? 'SIGINT' : 'SIGTERM');
    worker.proc.kill();
  }
  if (process.argv.includes('--no-zero')) return void agent.destroy();
  const z = await fromZero();
  console.log(
    `from zero (berth dev, Node worker): first request ${f(z.firstMs, 0)} ms, worker launch to /ping 200 ${z.readyMs} ms, difference ${f(z.firstMs - z.readyMs, 0)} ms (goal <= 300 ms)`,
  );
  agent.destroy();
}

const mode = process.argv[2];
if (mode === 'worker') runWorker();
else if (mode === 'bare') {
  process.on('SIGINT', () => process.exit(0)); // a --cpu-prof run writes its profile
  startBareProxy(Number(process.argv[3]), (port) => console.log(`PORT ${port}`));
} else if (mode === 'server') void runServer(Number(process.argv[3]), Number(process.argv[4]), process.argv[5]);
else await main();
