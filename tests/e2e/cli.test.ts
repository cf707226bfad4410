// The real binary: help, version, usage errors, config errors, `berth serve`.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT, pollUntil } from './harness.test-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'berth-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function berth(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: tmp,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 20_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('berth (binary)', () => {
  it('--help lists the commands; exit 0', () => {
    const r = berth('--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage: berth <command>/);
    expect(r.stdout).toMatch(/\bdev\b/);
    expect(r.stdout).toMatch(/\bserve\b/);
  });

  it('--version prints the package version', () => {
    const r = berth('--version');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each([['dev'], ['serve']])('%s --help; exit 0', (cmd) => {
    const r = berth(cmd, '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: berth ${cmd}`);
    expect(r.stdout).toContain('--port');
  });

  it('no command: usage on stderr, exit 2', () => {
    const r = berth();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Usage: berth/);
  });

  it('unknown command: exit 2', () => {
    const r = berth('deploy');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command "deploy"/);
  });

  it('unknown flag: exit 2 with the flag named', () => {
    const r = berth('dev', '--prot', '80');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--prot/);
    expect(r.stderr).toMatch(/berth dev --help/);
  });

  it('bad --port: exit 2', () => {
    const r = berth('serve', '--port', 'eighty');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--port must be a whole number from 0 to 65535 \(got "eighty"\)/);
  });

  it('port in use: exit 1 with a message that says what to do', async () => {
    const holder = createNetServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    try {
      const port = String((holder.address() as AddressInfo).port);
      const r = berth('serve', '--port', port);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(r.stdout).not.toMatch(/ready/);
    } finally {
      holder.close();
    }
  });

  it('missing config file: exit 2 naming the file', () => {
    const r = berth('dev', '--config', 'nope.json');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(join(tmp, 'nope.json'));
  });

  it('invalid config: exit 2 naming the file and the bad field', () => {
    const file = join(tmp, 'bad.json');
    writeFileSync(file, JSON.stringify({ endpoints: { echo: { worker: './echo.ts', workers: -1 } } }));
    const r = berth('dev', '--config', file);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toContain('endpoints.echo.workers: must be at least 0 (got -1)');
  });

  it('a worker file that does not exist: exit 2 before starting anything', () => {
    const file = join(tmp, 'missing-worker.json');
    writeFileSync(file, JSON.stringify({ endpoints: { echo: { worker: './not-here.ts' } } }));
    const r = berth('dev', '--config', file, '--port', '0');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`endpoints.echo.worker: file not found: ${join(tmp, 'not-here.ts')}`);
    expect(r.stdout).not.toMatch(/ready/);
  });

  it('a TypeScript config with defineConfig is loaded', () => {
    const file = join(tmp, 'berth.config.ts');
    // A relative import of the built package keeps this independent of module resolution from the tmp dir.
    const cli = pathToFileURL(join(REPO_ROOT, 'packages/cli/dist/index.js')).href;
    writeFileSync(
      file,
      `import { defineConfig } from ${JSON.stringify(cli)};\nexport default defineConfig({ endpoints: { echo: { worker: './gone.ts' } } });\n`,
    );
    // Loading succeeds; validation then reaches the worker-file check (so nothing starts).
    const r = berth('dev', '--port', '0');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('endpoints.echo.worker: file not found');
  });
});

describe('berth serve', () => {
  it('prints the ready line, the API key, the worker token and how to start a worker; SIGTERM exits 0', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--endpoint', 'echo,other'], {
      cwd: tmp,
      env: { ...process.env, NO_COLOR: '1', BERTH_API_KEY: 'key-from-env', BERTH_WORKER_TOKEN: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
    try {
      await pollUntil(
        async () => out,
        (o) => /Press Ctrl-C/.test(o),
        20_000,
      );
      const url = out.match(/berth ready at (http:\/\/127\.0\.0\.1:\d+) \(endpoints: echo, other\)/)?.[1];
      expect(url).toBeDefined();
      expect(out).toContain('API key: key-from-env');
      const token = out.match(/Worker token: (berthw_\S+)/)?.[1];
      expect(token).toBeDefined();
      expect(out).toContain(`BERTH_URL=${url} BERTH_ENDPOINT_ID=echo BERTH_WORKER_TOKEN=${token}`);
      const health = await fetch(`${url}/v2/echo/health`, { headers: { authorization: 'Bearer key-from-env' } });
      expect(health.status).toBe(200);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
