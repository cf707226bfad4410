import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT } from './harness.test-helpers.js';

const KEY = 'berth_serve_config_key';

describe('berth serve --config', () => {
  it("serves the config's endpoints and public models without starting its workers", { timeout: 30_000 }, async () => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        'serve',
        '--port',
        '0',
        '--store',
        'memory',
        '--config',
        join(REPO_ROOT, 'examples/image-worker/berth.config.json'),
      ],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, BERTH_API_KEY: KEY, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const deadline = Date.now() + 15_000;
      let m: RegExpExecArray | null;
      while (!(m = /berth ready at (\S+) \(endpoints: ([^)]*)\)/.exec(out))) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`not ready:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const [, url, eps] = m;
      expect(eps).toBe('image, upscale, video');
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
      expect(out).not.toMatch(/worker started/); // workers are not berth serve's job
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});
