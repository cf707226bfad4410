import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT } from './harness.test-helpers.js';

const KEY = 'berth_serve_config_key';

/** `berth serve --config <config> --store memory` on a free port, until its ready line; `stop` ends it. */
async function serveConfig(
  config: string,
  cwd: string,
): Promise<{ url: string; endpoints: string; output: () => string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--store', 'memory', '--config', config], {
    cwd,
    env: { ...process.env, BERTH_API_KEY: KEY, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const stop = async () => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  };
  const deadline = Date.now() + 15_000;
  let m: RegExpExecArray | null;
  while (!(m = /berth ready at (\S+) \(endpoints: ([^)]*)\)/.exec(out))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`not ready:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: m[1]!, endpoints: m[2]!, output: () => out, stop };
}

describe('berth serve --config', () => {
  it("serves the config's endpoints and public models without starting its workers", { timeout: 30_000 }, async () => {
    const serve = await serveConfig(join(REPO_ROOT, 'examples/image-worker/berth.config.json'), REPO_ROOT);
    try {
      const { url } = serve;
      expect(serve.endpoints).toBe('image, upscale, video');
      const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
      // A bad input on the slug is refused at submit (a FAILED job object), no worker needed.
      const res = await fetch(`${url}/v2/shapes-diffusion/runsync`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ input: { prompt: 'x', width: 7 } }),
      });
      const body = (await res.json()) as { status: string; error: string };
      expect(body.status).toBe('FAILED');
      expect(body.error).toMatch(/^invalid_input: width/);
      // A good one is queued for the image endpoint's workers (none connected here).
      const queued = await fetch(`${url}/v2/shapes-diffusion/run`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ input: { prompt: 'a red circle' } }),
      });
      expect(((await queued.json()) as { status: string }).status).toBe('IN_QUEUE');
      const health = (await (await fetch(`${url}/v2/image/health`, { headers })).json()) as {
        jobs: { inQueue: number };
      };
      expect(health.jobs.inQueue).toBe(1);
      expect(serve.output()).not.toMatch(/worker started/); // workers are not berth serve's job
    } finally {
      await serve.stop();
    }
  });
});

describe('berth serve --config: batches', () => {
  it("the file's Batch Jobs limits are the server's: a 3-request add over maxPerCall 2 is refused, 2 are taken", {
    timeout: 30_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-batches-config-'));
    const file = join(dir, 'berth.config.json');
    writeFileSync(join(dir, 'echo.ts'), 'export {};\n');
    writeFileSync(file, JSON.stringify({ endpoints: { echo: { worker: './echo.ts' } }, batches: { maxPerCall: 2 } }));
    const serve = await serveConfig(file, dir);
    try {
      const post = (n: number) =>
        fetch(`${serve.url}/v2/echo/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ requests: Array.from({ length: n }, (_, i) => ({ input: { i } })) }),
        });
      const over = await post(3);
      expect(over.status).toBe(413);
      expect(await over.json()).toMatchObject({ code: 'batch_too_many_requests', details: { limit: 2 } });
      const fits = await post(2);
      expect(fits.status).toBe(200);
      expect(await fits.json()).toMatchObject({ status: 'DRAFT', requestTotal: 2 });
    } finally {
      await serve.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('berth serve logs', () => {
  it('with stdout not a terminal: JSON lines after the banner; a job line carries jobId, endpointId, workerId and attempt', {
    timeout: 60_000,
  }, async () => {
    const token = 'berth_serve_json_worker_token';
    const env: NodeJS.ProcessEnv = { ...process.env, BERTH_API_KEY: KEY, BERTH_WORKER_TOKEN: token, NO_COLOR: '1' };
    delete env['BERTH_LOG_FORMAT']; // the default for a stdout that is not a terminal
    const serve = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--store', 'memory', '--endpoint', 'echo'], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    serve.stdout.on('data', (d: Buffer) => (out += d.toString()));
    serve.stderr.on('data', (d: Buffer) => (out += d.toString()));
    let worker: ReturnType<typeof spawn> | undefined;
    const until = async (re: RegExp, what: string) => {
      const deadline = Date.now() + 30_000;
      let m: RegExpExecArray | null;
      while (!(m = re.exec(out))) {
        if (Date.now() > deadline || serve.exitCode !== null) throw new Error(`${what} not seen:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return m;
    };
    try {
      const [, url] = (await until(/berth ready at (http:\/\/[^\s"()]+)/, 'ready')) as RegExpExecArray;
      worker = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'examples/basic/echo.ts')], {
        cwd: REPO_ROOT,
        env: { ...env, BERTH_URL: url, BERTH_ENDPOINT_ID: 'echo' },
        stdio: 'ignore',
      });
      const res = await fetch(`${url}/v2/echo/runsync`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input: { json: 'logs' } }),
      });
      const job = (await res.json()) as { id: string; status: string; workerId: string };
      expect(job.status).toBe('COMPLETED');
      await until(/"msg":"job completed"/, 'the job completed line');
      // The start-up banner stays plain text (docs/observability.md); every line after it is JSON.
      const logs = out.slice(out.indexOf('Press Ctrl-C to stop.') + 'Press Ctrl-C to stop.'.length);
      const lines = logs.split('\n').filter((l) => l.trim() !== '');
      const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      for (const p of parsed) expect(p).toMatchObject({ level: expect.any(Number), time: expect.any(Number) });
      expect(parsed.find((p) => p['msg'] === 'job completed')).toMatchObject({
        jobId: job.id,
        endpointId: 'echo',
        workerId: job.workerId,
        attempt: 1,
      });
    } finally {
      worker?.kill('SIGTERM');
      serve.kill('SIGTERM');
      await new Promise((r) => serve.once('exit', r));
    }
  });
});
