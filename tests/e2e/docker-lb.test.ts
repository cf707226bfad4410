import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGES } from '../../packages/cli/src/build/dockerfile.js';
import { api, type ServeProcess } from '../durability/cluster.test-helpers.js';
import {
  containers as listContainers,
  startScaleServe,
  stopScaleRun,
  waitFor as waitUntil,
  watchFirstPing,
} from './docker-scale.test-helpers.js';
import { dockerUnavailable, ensureBaseImage, startDocker, type Docker } from './docker.test-helpers.js';
import { REPO_ROOT } from './harness.test-helpers.js';

/**
 * A load-balancing endpoint under `berth serve --scale docker` against a real dockerd (issue #39): a tiny Node
 * HTTP server image (PORT, /ping, /generate) on the host network, served through /v2/<ep>/lb/<path> from zero
 * containers, then scaled back to zero once idle; and the image of a `create-worker --template http` project,
 * whose first request from zero is timed against the container's own boot (the figure in
 * docs/load-balancing.md#cold-starts-from-zero).
 */
const skip = dockerUnavailable();
if (skip) console.log(`[docker-lb] skipped: ${skip}`);

const IMAGE = 'berth-lb-test/gen';
const CREATE = join(REPO_ROOT, 'packages/create-worker/bin/create-worker.js');
/** The scaffolded project's name: its endpoint's id and its image's tag. */
const TPL = 'berth-lb-template';
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

const containers = (all = false) => listContainers(docker, NAME, all);
const waitFor = <T>(what: string, ms: number, check: () => T | Promise<T>) =>
  waitUntil(what, ms, check, () => serve?.text ?? '');
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

/** `create-worker --template http` into `work/<TPL>`, its image built as the project's own Dockerfile says. */
function buildTemplateImage(): { image: string; endpoint: Record<string, unknown> } {
  const dir = join(work, TPL);
  const made = spawnSync(process.execPath, [CREATE, dir, '--template', 'http', '--no-install'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (made.status !== 0) throw new Error(`create-worker failed:\n${made.stdout}${made.stderr}`);
  const config = JSON.parse(readFileSync(join(dir, 'berth.config.json'), 'utf8')) as {
    endpoints: Record<string, Record<string, unknown>>;
  };
  const endpoint = config.endpoints[TPL]!;
  const image = String(endpoint['image']);
  docker.run(['build', '--network=host', '-q', '-t', image, dir]);
  return { image, endpoint };
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
    const tpl = buildTemplateImage();
    const cfg = join(work, 'berth.config.json');
    const gen = { type: 'http', image: IMAGE, maxWorkers: 2, idleTimeoutMs: 1000 };
    // The template's endpoint as scaffolded, idle after 1 s instead of 10 so the timing test can start from zero again.
    writeFileSync(cfg, JSON.stringify({ endpoints: { gen, [TPL]: { ...tpl.endpoint, idleTimeoutMs: 1000 } } }));
    ({ serve, base } = await startScaleServe(cfg, work, NAME));
    console.log(`[docker-lb] load ${load()}`);
  }, 600_000);

  afterAll(() => stopScaleRun(docker, NAME, work), 120_000);

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

  it('the http template image from zero: first request minus the container boot (start to /ping 200), printed', async () => {
    const f = (ms: number) => Math.round(ms);
    const overheads: number[] = [];
    for (let run = 1; run <= 3; run++) {
      // From zero: the previous run's container stopped and removed (idleTimeoutMs 1 s here).
      await waitFor(
        'no template container',
        60_000,
        () => !docker.run(['ps', '-a', '-q', '--filter', `name=-${TPL}-`]),
      );
      const watch = watchFirstPing(docker, NAME, TPL);
      watch.catch(() => {}); // awaited below, after the request
      const sentAt = Date.now();
      const t0 = performance.now();
      const r = await api(base, 'POST', `/v2/${TPL}/lb/generate`, { prompt: `cold ${run}` });
      const total = performance.now() - t0;
      const answeredAt = Date.now();
      const w = await watch;
      expect(r.status, serve.text.slice(-3000)).toBe(200);
      expect(r.json).toMatchObject({ generated_text: `Generated text for: cold ${run}`, worker: w.name });
      // The container's boot: its process started (docker's StartedAt) to its first /ping 200 (polled every 5 ms).
      const boot = w.firstOkAt - w.startedAt;
      expect(boot).toBeGreaterThan(0);
      expect(w.startedAt).toBeGreaterThanOrEqual(w.createdAt);
      expect(answeredAt).toBeGreaterThanOrEqual(w.firstOkAt);
      overheads.push(total - boot);
      // The last such line: a worker started again after a scale-down keeps its name.
      const own = [
        ...serve.text.matchAll(new RegExp(`worker ${w.name} ready \\(/ping 200 after (\\d+) ms\\)`, 'g')),
      ].at(-1)?.[1];
      console.log(
        `[docker-lb] template image from zero, run ${run}: first request ${f(total)} ms = container boot ${f(boot)} ms ` +
          `+ ${f(total - boot)} ms (request to create ${f(w.createdAt - sentAt)} ms, docker create to start ` +
          `${f(w.startedAt - w.createdAt)} ms, /ping 200 to answer ${f(answeredAt - w.firstOkAt)} ms); Berth's ` +
          `own cold start figure ${own ?? '?'} ms; storage driver ${docker.storageDriver}; load ${load()}`,
      );
    }
    overheads.sort((a, b) => a - b);
    console.log(`[docker-lb] template image from zero: first request minus boot, median of 3: ${f(overheads[1]!)} ms`);
  }, 180_000);
});
