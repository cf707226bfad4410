import { spawn, type ChildProcess } from 'node:child_process';
import { createLogger } from '@berth/protocol/log';
import { createServer, type BerthServer } from '@berth/server';
import { ScaleLoop } from '@berth/server/scaling';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/index.js';
import { HttpWorkers } from '../internal/http-workers.js';
import type { DockerApi } from './docker-api.js';
import { DockerPool } from './docker-pool.js';
import { FakeDaemon } from './fake-daemon.test-helpers.js';
import { hookLoadBalancing } from './scale-options.js';

// Load-balancing endpoints under `berth serve --scale docker` (issue #39), against the fake daemon: each
// "container" started is a real Node HTTP server process with the environment of its create call (PORT on the
// host network, as with `--network=host`), behind a real control plane's proxy.

const KEY = 'berth_test_key_0123456789abcdef';
const SERVER = `require('node:http').createServer((q, s) => {
  if (q.url === '/ping') return void s.writeHead(globalThis.sick ? 500 : 200).end();
  if (q.url === '/sick') globalThis.sick = true;
  s.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: q.url, port: process.env.PORT }));
}).listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));`;

/** The fake daemon, whose containers run: a start spawns the server with the create call's env, a stop ends it. */
function runningDaemon(daemon: FakeDaemon, procs: Map<string, ChildProcess>): DockerApi {
  const api = daemon.api();
  const nameOf = (id: string) => daemon.containers.get(id)!.Names[0]!.slice(1);
  return {
    ...api,
    startContainer: async (id: string) => {
      await api.startContainer(id);
      const env = Object.fromEntries(
        daemon.specs.get(nameOf(id))!.Env.map((kv) => kv.split('=', 2) as [string, string]),
      );
      const child = spawn(process.execPath, ['-e', SERVER], { env: { ...process.env, ...env }, stdio: 'ignore' });
      procs.set(id, child);
      child.on('exit', () => {
        const c = daemon.containers.get(id);
        if (c) c.State = 'exited';
      });
    },
    stopContainer: async (id: string, t: number) => {
      procs.get(id)?.kill('SIGTERM');
      await api.stopContainer(id, t);
    },
  } as DockerApi;
}

const servers: BerthServer[] = [];
const loops: ScaleLoop[] = [];
const procs = new Map<string, ChildProcess>();
afterEach(async () => {
  for (const l of loops.splice(0)) await l.stop();
  for (const p of procs.values()) p.kill('SIGKILL');
  procs.clear();
  for (const s of servers.splice(0)) await s.close({ drainMs: 0 });
});

/** The endpoint `gen`, scaled down after `idleTimeoutMs` without a request. */
const endpoint = (idleTimeoutMs: number) =>
  resolveConfig(
    { endpoints: { gen: { type: 'http', image: 'gen:1', maxWorkers: 2, idleTimeoutMs } } },
    '/p/berth.config.json',
  ).endpoints[0]!;

/** A control plane with the endpoint, and the Docker pool and scale loop over the daemon, hooked as serve does. */
async function controlPlane(
  daemon: FakeDaemon,
  ep = endpoint(300),
): Promise<{ s: BerthServer; url: string; pool: DockerPool }> {
  const s = createServer({
    apiKeys: [KEY],
    endpoints: ['gen'],
    logger: createLogger({ write: () => {} }),
    lb: { gen: ep.http! },
  });
  servers.push(s);
  const { url } = await s.listen({ port: 0 });
  const pool = new DockerPool({
    workers: s.workers,
    docker: runningDaemon(daemon, procs),
    endpoints: [{ ep, image: 'gen:1' }],
    name: 'test',
    url,
    tokens: { deployment: async () => 'd0d0d0d0', settle: async () => ({ token: 'berth_wk_x', revoked: 0 }) },
    logger: createLogger({ write: () => {} }),
    http: new HttpWorkers(s.lb),
  });
  const l = new ScaleLoop({ server: s, pool, endpoints: [ep], logger: createLogger({ write: () => {} }) });
  loops.push(l);
  hookLoadBalancing(s.lb, l, pool);
  l.start();
  return { s, url, pool };
}

const auth = { authorization: `Bearer ${KEY}` };

describe('DockerPool: load-balancing endpoints (issue #39)', () => {
  it('a request from zero starts a container (image, PORT/PORT_HEALTH, host network), goes through, and the idle worker is drained and stopped', async () => {
    const daemon = new FakeDaemon();
    const { s, url } = await controlPlane(daemon);
    expect((await s.health('gen')).workers.ready).toBe(0);

    const r = await fetch(`${url}/v2/gen/lb/generate?n=1`, { method: 'POST', headers: auth, body: '{}' });
    expect(r.status).toBe(200);
    const name = 'test-d0d0d0d0-gen-1';
    expect(r.headers.get('x-runpod-worker-id')).toBe(name);
    const body = (await r.json()) as { path: string; port: string };
    expect(body.path).toBe('/generate?n=1');
    const spec = daemon.specs.get(name)!;
    expect(spec.Image).toBe('gen:1');
    expect(spec.HostConfig.NetworkMode).toBe('host');
    expect(spec.Env).toContain(`PORT=${body.port}`);
    expect(spec.Env).toContain(`PORT_HEALTH=${body.port}`);
    expect(spec.Env.filter((e) => e.startsWith('BERTH_URL=') || e.startsWith('BERTH_WORKER_TOKEN='))).toEqual([]);
    expect(spec.Env).toContain(`RUNPOD_POD_ID=${name}`);
    expect(daemon.calls.filter((c) => c.startsWith('create'))).toEqual([`create ${name}`]);

    // The cold start (create to /ping 200) is in the histogram.
    const metrics = await (await fetch(`${url}/metrics`, { headers: auth })).text();
    expect(metrics).toMatch(/berth_worker_cold_start_seconds_count\{[^}]*endpoint="gen"[^}]*\} 1/);

    // Idle past idleTimeoutMs: drained, stopped, reaped; back to zero.
    const deadline = Date.now() + 10_000;
    while (daemon.containers.size > 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
    expect(daemon.calls).toContain(`stop ${name}`);
    expect(daemon.containers.size).toBe(0);
    expect((await s.health('gen')).workers).toMatchObject({ ready: 0, initializing: 0 });
  }, 20_000);

  it('a restarted control plane adopts a running container at the PORT it was created with (no new one)', async () => {
    const daemon = new FakeDaemon();
    const first = await controlPlane(daemon, endpoint(60_000));
    const r = await fetch(`${first.url}/v2/gen/lb/generate`, { method: 'POST', headers: auth, body: '{}' });
    const { port } = (await r.json()) as { port: string };
    // The first control plane goes away; its container keeps running.
    await loops.shift()!.stop();
    first.pool.close();
    const second = await controlPlane(daemon, endpoint(60_000));
    const again = await fetch(`${second.url}/v2/gen/lb/generate`, { method: 'POST', headers: auth, body: '{}' });
    expect(again.status).toBe(200);
    expect(again.headers.get('x-runpod-worker-id')).toBe('test-d0d0d0d0-gen-1');
    expect(((await again.json()) as { port: string }).port).toBe(port);
    expect(daemon.calls.filter((c) => c.startsWith('create'))).toHaveLength(1);
  }, 20_000);

  it('a container failing its health checks is drained and stopped; the next request gets a new one', async () => {
    const daemon = new FakeDaemon();
    const { url } = await controlPlane(daemon, endpoint(60_000));
    const r = await fetch(`${url}/v2/gen/lb/sick`, { method: 'POST', headers: auth });
    expect(r.status).toBe(200);
    // /ping says 500 from now on: unhealthy after 3 failed checks (the first within healthIntervalMs, 1 s).
    const deadline = Date.now() + 10_000;
    while (daemon.containers.size > 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
    expect(daemon.calls).toContain('stop test-d0d0d0d0-gen-1');
    expect(daemon.containers.size).toBe(0);
    const again = await fetch(`${url}/v2/gen/lb/generate`, { method: 'POST', headers: auth, body: '{}' });
    expect(again.status).toBe(200);
    expect(daemon.calls.filter((c) => c.startsWith('create'))).toHaveLength(2);
  }, 20_000);

  it('strict-resume brings a container stopped while idle back under its name; strict answers it gone; names are not reused', async () => {
    const daemon = new FakeDaemon();
    const { url } = await controlPlane(daemon);
    const call = (pin?: string) =>
      fetch(`${url}/v2/gen/lb/generate`, {
        method: 'POST',
        headers: { ...auth, ...(pin ? { 'x-runpod-worker-id': pin } : {}) },
        body: '{}',
      });
    const toZero = async () => {
      const deadline = Date.now() + 10_000;
      while (daemon.containers.size > 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
      expect(daemon.containers.size).toBe(0);
    };
    const first = await call();
    const name = first.headers.get('x-runpod-worker-id')!;
    expect(name).toBe('test-d0d0d0d0-gen-1');
    await toZero();

    const gone = await call(`strict ${name}`);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { code: string }).code).toBe('affinity_worker_gone');
    const resumed = await call(`strict-resume ${name}`);
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('x-runpod-worker-id')).toBe(name);
    expect(daemon.calls.filter((c) => c.startsWith('create'))).toEqual([`create ${name}`, `create ${name}`]);

    // Idle again, then a request with no pin: a new name, never the one a client may still hold.
    await toZero();
    const fresh = await call();
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('x-runpod-worker-id')).toBe('test-d0d0d0d0-gen-2');
  }, 30_000);
});
