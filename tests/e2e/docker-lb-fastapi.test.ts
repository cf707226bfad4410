import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGES } from '../../packages/cli/src/build/dockerfile.js';
import { api, API_KEY, type ServeProcess } from '../durability/cluster.test-helpers.js';
import { containers, startScaleServe, stopScaleRun, waitFor } from './docker-scale.test-helpers.js';
import { dockerUnavailable, ensureBaseImage, startDocker, type Docker } from './docker.test-helpers.js';
import { REPO_ROOT } from './harness.test-helpers.js';

/**
 * A worker in the shape of RunPod's load-balancing template (a FastAPI app with /ping, /generate, /stats, run by
 * uvicorn on PORT: tests/e2e/fixtures/lb/app.py, the one lb-dev.test.ts runs as a process) served **as an image**
 * by `berth serve --scale docker` against a real dockerd (issue #39). The image is Debian's python3-fastapi and
 * python3-uvicorn on the Node base image. Through the proxy: the three routes, scale 0 -> N -> 0 on a burst with
 * every request answered, and a container killed mid-request giving the client a clear 502.
 */
const skip = dockerUnavailable();
if (skip) console.log(`[docker-lb-fastapi] skipped: ${skip}`);

const IMAGE = 'berth-lb-test/fastapi';
mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const work = mkdtempSync(join(REPO_ROOT, '.berth', 'docker-lb-fastapi-'));
const NAME = `f${process.pid}`;
let docker: Docker;
let serve: ServeProcess;
let base = '';
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

const DOCKERFILE = `FROM ${BASE_IMAGES.cpu}
RUN apt-get update && apt-get install -y --no-install-recommends python3-fastapi python3-uvicorn \\
  && rm -rf /var/lib/apt/lists/*
COPY app.py /app/app.py
EXPOSE 8080
CMD ["sh", "-c", "exec python3 -m uvicorn app:app --app-dir /app --host 127.0.0.1 --port \${PORT:-8080} --log-level warning"]
`;

const ps = (all = false) => containers(docker, NAME, all);

const generate = (prompt: string, sleepMs = 0) =>
  api(base, 'POST', '/v2/gen/lb/generate', { prompt, sleep_ms: sleepMs });

describe.skipIf(skip !== undefined)(
  'berth serve --scale docker: a FastAPI worker image (RunPod template shape)',
  () => {
    beforeAll(async () => {
      docker = await startDocker();
      if (docker.env['DOCKER_HOST']) process.env['DOCKER_HOST'] = docker.env['DOCKER_HOST'];
      ensureBaseImage(docker, BASE_IMAGES.cpu);
      const dir = join(work, 'image');
      mkdirSync(dir);
      copyFileSync(join(REPO_ROOT, 'tests/e2e/fixtures/lb/app.py'), join(dir, 'app.py'));
      writeFileSync(join(dir, 'Dockerfile'), DOCKERFILE);
      const t0 = performance.now();
      docker.run(['build', '--network=host', '-q', '-t', IMAGE, dir]);
      console.log(`[docker-lb-fastapi] image built in ${Math.round(performance.now() - t0)} ms`);
      const cfg = join(work, 'berth.config.json');
      const gen = { type: 'http', image: IMAGE, maxWorkers: 3, idleTimeoutMs: 1_500 };
      writeFileSync(cfg, JSON.stringify({ endpoints: { gen } }));
      ({ serve, base } = await startScaleServe(cfg, work, NAME));
    }, 600_000);

    afterAll(() => stopScaleRun(docker, NAME, work), 120_000);

    it('/generate, /stats and /ping through the proxy; a burst scales 0 -> N -> 0 with every request answered', async () => {
      expect(ps()).toEqual([]);
      const t0 = performance.now();
      const first = await generate('hello');
      const ms = Math.round(performance.now() - t0);
      expect(first.status, serve.text.slice(-3000)).toBe(200);
      expect(first.json['generated_text']).toBe('Generated text for: hello');
      const id = String(first.json['worker']); // RUNPOD_POD_ID: the worker's id, the container's name
      expect(id).toMatch(new RegExp(`^${NAME}-[0-9a-f]{8}-gen-1$`));
      console.log(`[docker-lb-fastapi] first request from zero (python3 + FastAPI import) ${ms} ms; load ${load()}`);
      expect((await api(base, 'GET', '/v2/gen/lb/ping')).json).toEqual({ status: 'healthy' });
      expect((await api(base, 'GET', '/v2/gen/lb/stats')).json).toMatchObject({ total_requests: 1, worker: id });

      // 12 requests of 600 ms at once, concurrency 1 per worker: more containers start (up to 3), none fails.
      const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => generate(`b${i}`, 600)));
      expect(burst.map((r) => r.status)).toEqual(Array(12).fill(200));
      expect(burst.map((r) => r.json['generated_text'])).toEqual(burst.map((_, i) => `Generated text for: b${i}`));
      const workers = new Set(burst.map((r) => r.json['worker']));
      console.log(`[docker-lb-fastapi] burst of 12 served by ${workers.size} containers; load ${load()}`);
      expect(workers.size).toBeGreaterThan(1);
      expect(workers.size).toBeLessThanOrEqual(3);

      // Idle: every container stopped and removed.
      await waitFor(
        'scale to zero',
        60_000,
        () => ps(true).length === 0,
        () => serve.text,
      );
      const h = (await api(base, 'GET', '/v2/gen/health')).json as { workers: Record<string, number> };
      expect(h.workers).toMatchObject({ ready: 0, initializing: 0 });
      const auth = { headers: { authorization: `Bearer ${API_KEY}` } };
      const metrics = await (await fetch(`${base}/metrics`, auth)).text();
      expect(metrics).toMatch(/berth_worker_cold_start_seconds_count\{endpoint="gen",until="ready"\} [2-9]/);
      expect(metrics).not.toMatch(/berth_lb_requests_total\{endpoint="gen",[^}]*status="5\d\d"\}/);
    }, 240_000);

    it('affinity: a soft pin stays on its container; once it is stopped, strict answers it gone and strict-resume starts it again by name', async () => {
      const pinned = (pin: string) =>
        fetch(`${base}/v2/gen/lb/generate`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${API_KEY}`,
            'content-type': 'application/json',
            'x-runpod-worker-id': pin,
          },
          body: JSON.stringify({ prompt: 'pinned' }),
          signal: AbortSignal.timeout(90_000),
        });
      const first = await generate('to pin');
      const id = String(first.json['worker']);
      const soft = await pinned(id);
      expect([soft.status, soft.headers.get('x-runpod-worker-id')]).toEqual([200, id]);
      await waitFor(
        'scale to zero',
        60_000,
        () => ps(true).length === 0,
        () => serve.text,
      );
      const gone = await pinned(`strict ${id}`);
      expect([gone.status, ((await gone.json()) as { code: string }).code]).toEqual([404, 'affinity_worker_gone']);
      const t0 = performance.now();
      const resumed = await pinned(`strict-resume ${id}`);
      expect([resumed.status, resumed.headers.get('x-runpod-worker-id')], serve.text.slice(-3000)).toEqual([200, id]);
      console.log(
        `[docker-lb-fastapi] strict-resume of ${id} answered by a new container under its name in ${Math.round(performance.now() - t0)} ms; load ${load()}`,
      );
      // A new container under the old name: its process has served the resumed request and this one, no more.
      expect((await pinned(id)).status).toBe(200);
      expect((await api(base, 'GET', '/v2/gen/lb/stats')).json).toMatchObject({ worker: id, total_requests: 2 });
    }, 240_000);

    it('a container killed mid-request: the client gets 502 worker_lost at once (no hang); the next request is served', async () => {
      const slow = generate('doomed', 20_000);
      const h = await waitFor(
        'a ready worker',
        60_000,
        async () => {
          const r = (await api(base, 'GET', '/v2/gen/health')).json as { workers: Record<string, number> };
          return r.workers['ready'] === 1 && ps().length === 1 ? ps()[0] : undefined;
        },
        () => serve.text,
      );
      await new Promise((r) => setTimeout(r, 500)); // the request is in the worker now
      const t0 = performance.now();
      docker.run(['kill', h]);
      const lost = await slow;
      const ms = Math.round(performance.now() - t0);
      expect([lost.status, lost.json['code']], serve.text.slice(-3000)).toEqual([502, 'worker_lost']);
      expect(String(lost.json['error'])).toMatch(/worker/);
      expect(ms).toBeLessThan(10_000); // not the 20 s the worker would have taken
      console.log(`[docker-lb-fastapi] 502 ${ms} ms after docker kill; load ${load()}`);
      const back = await waitFor(
        'a new container serving',
        90_000,
        async () => {
          const r = await generate('again').catch(() => undefined);
          return r?.status === 200 ? r : undefined;
        },
        () => serve.text,
      );
      // A new container: its process has served this one request alone.
      expect(String(back.json['worker'])).toMatch(new RegExp(`^${NAME}-[0-9a-f]{8}-gen-\\d+$`));
      expect((await api(base, 'GET', '/v2/gen/lb/stats')).json).toMatchObject({ total_requests: 1 });
    }, 240_000);
  },
);
