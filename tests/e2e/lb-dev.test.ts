import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import type { HealthReply } from '@berth/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, pollUntil, REPO_ROOT, startBerthDev, type BerthDev } from './harness.test-helpers.js';

// Load-balancing endpoints under `berth dev` (issue #39): real worker processes (a FastAPI app in the shape of
// RunPod's template under Debian's uvicorn, and a small Node server), real sockets, through /v2/<ep>/lb/<path>.
const PYTHON = '/usr/bin/python3';
const hasFastApi = spawnSync(PYTHON, ['-c', 'import fastapi, uvicorn'], { stdio: 'ignore' }).status === 0;
const FIXTURES = join(REPO_ROOT, 'tests/e2e/fixtures/lb');

mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const tmp = mkdtempSync(join(REPO_ROOT, '.berth', 'lb-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const UVICORN = `${PYTHON} -m uvicorn app:app --app-dir ${FIXTURES} --host 127.0.0.1 --port $PORT --log-level warning`;

function config(name: string, endpoints: Record<string, unknown>): string {
  const file = join(tmp, `${name}.config.json`);
  writeFileSync(file, JSON.stringify({ endpoints }));
  return file;
}

const health = async (berth: BerthDev, ep: string) => (await berth.json<HealthReply>(`/v2/${ep}/health`)).body;

async function lb(berth: BerthDev, ep: string, path: string, init: RequestInit = {}) {
  const r = await berth.fetch(`/v2/${ep}/lb${path}`, init);
  const text = await r.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { status: r.status, worker: r.headers.get('x-runpod-worker-id'), body };
}

const generate = (berth: BerthDev, ep: string, prompt: string, sleepMs = 0, headers: Record<string, string> = {}) =>
  lb(berth, ep, '/generate', { method: 'POST', body: JSON.stringify({ prompt, sleep_ms: sleepMs }), headers });

describe.runIf(hasFastApi)(
  `berth dev: a FastAPI load-balancing worker${hasFastApi ? '' : ' (skipped: no python3-fastapi)'}`,
  () => {
    it('/generate, /stats and /ping through the proxy; scale 0 -> N -> 0 on a burst with every request answered', async () => {
      const file = config('burst', {
        gen: { type: 'http', command: UVICORN, maxWorkers: 3, idleTimeoutMs: 1_500 },
      });
      await using berth = await startBerthDev({ config: file });
      expect((await health(berth, 'gen')).workers).toMatchObject({ ready: 0, initializing: 0 });

      const first = await generate(berth, 'gen', 'hello');
      expect(first).toMatchObject({ status: 200, body: { generated_text: 'Generated text for: hello' } });
      expect(first.worker).toMatch(/^gen-[a-z0-9]+-1$/);
      expect(first.body['worker']).toBe(first.worker); // RUNPOD_POD_ID is the worker id
      expect((await lb(berth, 'gen', '/ping')).body).toEqual({ status: 'healthy' });
      expect((await lb(berth, 'gen', '/stats')).body).toMatchObject({ total_requests: 1 });
      await berth.waitForLine(/worker gen-[a-z0-9]+-1 ready \(\/ping 200 after \d+ ms\)/, 5_000);

      // A burst of 12 requests of 400 ms each, concurrency 1 per worker: more workers start, none fails.
      const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => generate(berth, 'gen', `b${i}`, 400)));
      expect(burst.map((r) => r.status)).toEqual(Array(12).fill(200));
      expect(burst.map((r) => r.body['generated_text'])).toEqual(burst.map((_, i) => `Generated text for: b${i}`));
      const workers = new Set(burst.map((r) => r.worker));
      expect(workers.size).toBeGreaterThan(1);
      expect(workers.size).toBeLessThanOrEqual(3);

      // Idle: back to zero.
      await pollUntil(
        () => health(berth, 'gen'),
        (h) => h.workers.ready + h.workers.initializing === 0,
        20_000,
      );
      const metrics = await (await berth.fetch('/metrics')).text();
      expect(metrics).toMatch(/berth_worker_cold_start_seconds_count\{endpoint="gen",until="ready"\} [2-9]/);
      expect(metrics).toMatch(/berth_lb_requests_total\{endpoint="gen",worker="gen-[a-z0-9]+-1",status="200"\} \d+/);
    });

    it('affinity: strict pins, soft falls back, strict on a busy worker 400, a gone one 404, strict-resume brings it back', async () => {
      const file = config('affinity', {
        gen: { type: 'http', command: UVICORN, maxWorkers: 2, idleTimeoutMs: 1_500, affinityWaitMs: 800 },
      });
      await using berth = await startBerthDev({ config: file });
      const a = await generate(berth, 'gen', 'a');
      const id = a.worker!;
      const pinned = await generate(berth, 'gen', 'again', 0, { 'x-runpod-worker-id': `strict ${id}` });
      expect([pinned.worker, pinned.body['pid']]).toEqual([id, a.body['pid']]);
      // Busy (concurrency 1): soft goes to another worker, strict waits and gives up with 400.
      const held = generate(berth, 'gen', 'long', 3_000, { 'x-runpod-worker-id': `strict ${id}` });
      await new Promise((r) => setTimeout(r, 300));
      const soft = await generate(berth, 'gen', 'soft', 0, { 'x-runpod-worker-id': id });
      expect([soft.status, soft.worker === id]).toEqual([200, false]);
      const strict = await generate(berth, 'gen', 'strict', 0, { 'x-runpod-worker-id': `strict ${id}` });
      expect([strict.status, strict.body['code']]).toEqual([400, 'worker_timeout']);
      expect((await held).status).toBe(200);
      const gone = await generate(berth, 'gen', 'x', 0, { 'x-runpod-worker-id': 'strict gen-nope-1' });
      expect([gone.status, gone.body['code']]).toEqual([404, 'affinity_worker_gone']);
      // Scaled down: strict is 404, strict-resume starts it again under its id (a new process).
      await berth.waitForLine(new RegExp(`scaling gen down: worker idle .*workerId=${id}`), 20_000);
      await pollUntil(
        () => health(berth, 'gen'),
        (h) => h.workers.ready + h.workers.initializing === 0,
        20_000,
      );
      expect((await generate(berth, 'gen', 'x', 0, { 'x-runpod-worker-id': `strict ${id}` })).status).toBe(404);
      const resumed = await generate(berth, 'gen', 'back', 0, { 'x-runpod-worker-id': `strict-resume ${id}` });
      expect([resumed.status, resumed.worker]).toEqual([200, id]);
      expect(resumed.body['pid']).not.toBe(a.body['pid']);
    });

    it('a client disconnect aborts the upstream request; a worker killed mid-request is a clear 502, then replaced', async () => {
      const file = config('faults', { gen: { type: 'http', command: UVICORN, workers: 1, concurrency: 4 } });
      await using berth = await startBerthDev({ config: file });
      await pollUntil(
        () => health(berth, 'gen'),
        (h) => h.workers.ready === 1,
        30_000,
      );
      const ac = new AbortController();
      const gone = berth
        .fetch('/v2/gen/lb/hold', { method: 'POST', body: '{}', signal: ac.signal })
        .catch(() => 'aborted');
      await new Promise((r) => setTimeout(r, 500));
      ac.abort();
      expect(await gone).toBe('aborted');
      await pollUntil(
        () => lb(berth, 'gen', '/stats'),
        (r) => r.body['disconnected'] === 1,
        10_000,
      );

      const slow = generate(berth, 'gen', 'doomed', 10_000);
      await new Promise((r) => setTimeout(r, 500));
      const worker = (await lb(berth, 'gen', '/stats')).worker!;
      const pid = berth.workerPid(worker)!;
      process.kill(pid, 'SIGKILL');
      const lost = await slow;
      expect([lost.status, lost.body['code']]).toEqual([502, 'worker_lost']);
      // The supervisor restarts it; it serves again once its /ping says 200.
      const back = await pollUntil(
        () => generate(berth, 'gen', 'again'),
        (r) => r.status === 200,
        30_000,
      );
      expect(back.body['pid']).not.toBe(pid);
    });
  },
);

describe('berth dev: Node load-balancing workers', () => {
  it('a worker that stays 204 gets no traffic (400 no_workers_available); SSE passes through chunk by chunk', async () => {
    const log = join(tmp, 'stuck-requests.log');
    const worker = join(FIXTURES, 'node-worker.mjs');
    const file = config('node', {
      stuck: { type: 'http', command: `node ${worker} --stay-initializing`, workers: 1, coldStartWaitMs: 1_500 },
      sse: { type: 'http', command: `node ${worker}`, workers: 1 },
    });
    await using berth = await startBerthDev({ config: file, env: { REQUEST_LOG: log } });
    await pollUntil(
      () => health(berth, 'sse'),
      (h) => h.workers.ready === 1,
      20_000,
    );
    await pollUntil(
      () => health(berth, 'stuck'),
      (h) => h.workers.initializing === 1,
      20_000,
    );
    await new Promise((r) => setTimeout(r, 300)); // its /ping has answered 204 several times
    const refused = await lb(berth, 'stuck', '/generate', { method: 'POST', body: '{}' });
    expect([refused.status, refused.body['code']]).toEqual([400, 'no_workers_available']);
    expect((await health(berth, 'stuck')).workers).toMatchObject({ ready: 0, initializing: 1 });
    expect(existsSync(log) ? readFileSync(log, 'utf8') : '').toBe('');

    const started = performance.now();
    const r = await berth.fetch('/v2/sse/lb/sse');
    expect(r.headers.get('content-type')).toBe('text/event-stream');
    expect(r.headers.get('x-runpod-worker-id')).toMatch(/^sse-[a-z0-9]+-1$/);
    const reader = r.body!.getReader();
    const arrivals: { at: number; text: string }[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrivals.push({ at: performance.now() - started, text: Buffer.from(value).toString() });
    }
    expect(arrivals.map((a) => a.text).join('')).toBe('data: {"n":0}\n\ndata: {"n":1}\n\ndata: {"n":2}\n\n');
    expect(arrivals.length).toBe(3);
    expect(arrivals[2]!.at - arrivals[0]!.at).toBeGreaterThan(300);
    expect(readFileSync(log, 'utf8')).toBe('GET /sse\n');
  });

  it('a command that fails to start: the waiting request gets 400 no_workers_available at once, with the reason', async () => {
    const file = config('broken', { broken: { type: 'http', command: 'node -e "process.exit(3)"', maxWorkers: 1 } });
    await using berth = await startBerthDev({ config: file });
    const started = performance.now();
    const r = await lb(berth, 'broken', '/generate', { method: 'POST', body: '{}' });
    expect([r.status, r.body['code']]).toEqual([400, 'no_workers_available']);
    expect(String(r.body['error'])).toMatch(/no worker of broken can start: .*exited with code 3/);
    expect(performance.now() - started).toBeLessThan(20_000); // not the 2-minute coldStartWaitMs
    const again = await lb(berth, 'broken', '/generate', { method: 'POST', body: '{}' });
    expect(again.status).toBe(400);
  });

  it('berth serve refuses a load-balancing endpoint it cannot run clearly (exit 2): no --scale docker, a network other than host', () => {
    const file = config('serve', { gen: { type: 'http', command: 'node x.mjs', image: 'gen:1' } });
    const r = spawnSync(process.execPath, [BIN, 'serve', '--config', file, '--port', '0', '--store', 'memory'], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      'endpoints.gen.type: a "type": "http" endpoint runs under berth serve --scale docker with an "image"',
    );
    const bridged = config('serve-net', { gen: { type: 'http', image: 'gen:1', docker: { network: 'bridge' } } });
    const args = ['serve', '--config', bridged, '--port', '0', '--store', 'memory', '--scale', 'docker'];
    const n = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 20_000 });
    expect(n.status).toBe(2);
    expect(n.stderr).toContain(
      'endpoints.gen.docker.network: a "type": "http" endpoint\'s containers use the host network',
    );
  });

  it('berth build skips a load-balancing endpoint, saying why', () => {
    const file = config('build', { gen: { type: 'http', image: 'gen:1' } });
    const r = spawnSync(process.execPath, [BIN, 'build', '--config', file, '--out', join(tmp, 'build-out')], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.stdout).toContain('[1/1] gen: skipped: a load-balancing endpoint ("type": "http") brings its own image');
    expect(r.stdout).not.toContain('docker build -t gen-worker'); // nothing was built to run
    expect(r.status).toBe(0);
  });
});
