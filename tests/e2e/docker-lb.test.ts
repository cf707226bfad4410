import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGES } from '../../packages/cli/src/build/dockerfile.js';
import { api, freePort, killAll, startServe, type ServeProcess } from '../durability/cluster.test-helpers.js';
import { dockerUnavailable, ensureBaseImage, startDocker, type Docker } from './docker.test-helpers.js';
import { REPO_ROOT } from './harness.test-helpers.js';

/**
 * A load-balancing endpoint under `berth serve --scale docker` against a real dockerd (issue #39): a tiny Node
 * HTTP server image (PORT, /ping, /generate) on the host network, served through /v2/<ep>/lb/<path> from zero
 * containers, then scaled back to zero once idle.
 */
const skip = dockerUnavailable();
if (skip) console.log(`[docker-lb] skipped: ${skip}`);

const IMAGE = 'berth-lb-test/gen';
mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const work = mkdtempSync(join(REPO_ROOT, '.berth', 'docker-lb-'));
const NAME = `l${process.pid}`;
let docker: Docker;
let serve: ServeProcess;
let base = '';

const SERVER = `import { createServer } from 'node:http';
createServer((req, res) => {
  if (req.url === '/ping') return void res.writeHead(200).end();
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ path: req.url, port: process.env.PORT, pod: process.env.RUNPOD_POD_ID, body }));
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
`;

function containers(all = false): string[] {
  const out = docker.run(['ps', ...(all ? ['-a'] : []), '-q', '--filter', `label=berth.control-plane=${NAME}`]);
  return out ? out.split('\n') : [];
}

async function waitFor<T>(what: string, ms: number, check: () => T | Promise<T>): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${serve?.text.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.skipIf(skip !== undefined)('berth serve --scale docker: a load-balancing endpoint (real dockerd)', () => {
  beforeAll(async () => {
    docker = await startDocker();
    if (docker.env['DOCKER_HOST']) process.env['DOCKER_HOST'] = docker.env['DOCKER_HOST'];
    ensureBaseImage(docker, BASE_IMAGES.cpu);
    const dir = join(work, 'image');
    mkdirSync(dir);
    writeFileSync(join(dir, 'server.mjs'), SERVER);
    writeFileSync(
      join(dir, 'Dockerfile'),
      `FROM ${BASE_IMAGES.cpu}\nCOPY server.mjs /app/server.mjs\nCMD ["node", "/app/server.mjs"]\n`,
    );
    docker.run(['build', '--network=host', '-q', '-t', IMAGE, dir]);
    const cfg = join(work, 'berth.config.json');
    writeFileSync(
      cfg,
      JSON.stringify({ endpoints: { gen: { type: 'http', image: IMAGE, maxWorkers: 2, idleTimeoutMs: 1000 } } }),
    );
    const port = await freePort();
    const args = ['--store', 'memory', '--config', cfg, '--scale', 'docker', '--scale-name', NAME];
    serve = await startServe(port, join(work, 'data'), [...args, '--log-level', 'info', '--log-format', 'pretty']);
    base = `http://127.0.0.1:${port}`;
    console.log(
      `[docker-lb] load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  }, 600_000);

  afterAll(async () => {
    await killAll();
    if (docker) for (const id of containers(true)) spawnSync('docker', ['rm', '-f', id], { env: docker.env });
    await docker?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 120_000);

  it('a request from zero starts a container and is answered through the proxy; idle, it is stopped (back to 0)', async () => {
    expect(containers()).toEqual([]);
    const t0 = performance.now();
    const r = await api(base, 'POST', '/v2/gen/lb/generate?n=1', { prompt: 'hi' });
    const ms = Math.round(performance.now() - t0);
    expect(r.status, serve.text.slice(-3000)).toBe(200);
    expect(r.json['path']).toBe('/generate?n=1');
    expect(JSON.parse(r.json['body'] as string)).toEqual({ prompt: 'hi' });
    expect(String(r.json['pod'])).toMatch(new RegExp(`^${NAME}-[0-9a-f]{8}-gen-1$`));
    expect(Number(r.json['port'])).toBeGreaterThan(0);
    console.log(`[docker-lb] first request from zero answered in ${ms} ms`);
    expect(containers()).toHaveLength(1);
    await waitFor('scale to zero', 60_000, () => containers(true).length === 0);
    const h = (await api(base, 'GET', '/v2/gen/health')).json as { workers: Record<string, number> };
    expect(h.workers).toMatchObject({ ready: 0, initializing: 0 });
    expect(serve.text).toMatch(/scaling gen down: worker idle/);
  }, 180_000);
});
