import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { TEMPLATES } from '../../packages/create-worker/src/templates.js';

/**
 * The spec test of `create-worker`: for each template, the real binary, non-interactively (stdin is not a
 * TTY), with --local so that the Berth packages come from this checkout (packed into vendor/*.tgz; everything
 * else from the npm registry or its cache); then npm install, npm test, `berth test`, and `berth dev` completing
 * a job from test_input.json. Installs are the slow part: one per template, shared by its assertions. The flags
 * and files without an install are packages/create-worker/src/create-worker.test.ts (unit project).
 *
 * npm runs with `ignore-scripts`: better-sqlite3 (a dependency of @berth/cli) has no prebuilt binary reachable
 * here and compiling it takes minutes, so `berth dev` runs with BERTH_STORE=memory. Nothing else a generated
 * project uses needs an install script (esbuild, sharp and onnxruntime-node ship their CPU binaries as packages).
 */
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'packages/create-worker/bin/create-worker.js');
const MODELS_DIR = process.env['BERTH_MODELS_DIR'] ?? join(REPO, '../shared/models');
const work = mkdtempSync(join(tmpdir(), 'create-worker-'));
// Three installed projects: removing their node_modules takes a while on a busy machine.
afterAll(() => rm(work, { recursive: true, force: true }), 180_000);

const INSTALL_MS = 420_000;

function run(cmd: string, args: string[], cwd: string, timeout: number, env: Record<string, string | undefined> = {}) {
  const merged: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', BERTH_MODELS_DIR: MODELS_DIR, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete merged[k];
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}`, stdout: r.stdout };
}

// The queue templates; `http` (a server of its own, nothing to install to run it) is tests/e2e/lb-template.test.ts.
for (const template of TEMPLATES.filter((t) => t.kind !== 'http')) {
  const available = existsSync(join(REPO, 'templates', template.name, 'package.json'));
  describe.runIf(available)(`create-worker --template ${template.name} (generated project, installed)`, () => {
    const dir = join(work, `gen-${template.name}`);
    let installed = false;

    it(
      'creates and installs offline against this checkout',
      () => {
        const r = run(process.execPath, [BIN, dir, '--template', template.name, '--local', REPO], work, INSTALL_MS, {
          npm_config_user_agent: '',
          npm_config_ignore_scripts: 'true',
        });
        expect(r.code, r.out.slice(-3000)).toBe(0);
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
        expect(pkg.dependencies['@berth/worker']).toMatch(/^file:vendor\/berth-worker-.*\.tgz$/);
        expect(existsSync(join(dir, 'node_modules/@berth/worker/dist/index.js'))).toBe(true);
        installed = true;
      },
      INSTALL_MS + 30_000,
    );

    it('its tests pass (npm test)', () => {
      expect(installed).toBe(true);
      const r = run('npm', ['test'], dir, 180_000);
      expect(r.code, r.out.slice(-3000)).toBe(0);
      expect(r.out).toMatch(/Tests\s+\d+ passed/);
    }, 200_000);

    it.runIf(template.name !== 'basic')(
      'without BERTH_MODELS_DIR, npm test says to set it (no path outside the project)',
      () => {
        expect(installed).toBe(true);
        const r = run('npm', ['test'], dir, 120_000, { BERTH_MODELS_DIR: undefined });
        expect(r.code).not.toBe(0);
        expect(r.out).toMatch(/set BERTH_MODELS_DIR to the folder holding (tiny-sd|stories260K)\//);
        expect(r.out).not.toContain('shared/models');
      },
      130_000,
    );

    it('berth test runs test_input.json through the handler: exit 0', () => {
      expect(installed).toBe(true);
      const r = run(join(dir, 'node_modules/.bin/berth'), ['test'], dir, 180_000);
      expect(r.code, r.out.slice(-3000)).toBe(0);
      expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toMatchObject({ status: 'COMPLETED' });
    }, 200_000);

    it('npm run build writes the deployable folder with both Dockerfiles', () => {
      expect(installed).toBe(true);
      // berth build also installs the native dependencies into the folder (npm ci from the project's lock).
      const r = run('npm', ['run', 'build'], dir, 300_000);
      expect(r.code, r.out.slice(-3000)).toBe(0);
      const endpoint = Object.keys(JSON.parse(readFileSync(join(dir, 'berth.config.json'), 'utf8')).endpoints)[0]!;
      for (const f of ['worker.mjs', 'package.json', 'Dockerfile', 'Dockerfile.cuda', 'deploy.json', '.dockerignore'])
        expect(existsSync(join(dir, 'build', endpoint, f))).toBe(true);
    }, 330_000);

    it('berth dev serves it: a job from test_input.json completes (cold start from zero workers)', async () => {
      expect(installed).toBe(true);
      const key = 'berth_spec_key';
      const child = spawn(join(dir, 'node_modules/.bin/berth'), ['dev', '--port', '0'], {
        cwd: dir,
        env: { ...process.env, BERTH_API_KEY: key, NO_COLOR: '1', BERTH_MODELS_DIR: MODELS_DIR, BERTH_STORE: 'memory' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      try {
        const deadline = Date.now() + 60_000;
        let url: string | undefined;
        while (!(url = /ready at (http:\/\/[^\s)]+)/.exec(out)?.[1])) {
          if (Date.now() > deadline || child.exitCode !== null) throw new Error(`berth dev did not start:\n${out}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        const endpoint = Object.keys(JSON.parse(readFileSync(join(dir, 'berth.config.json'), 'utf8')).endpoints)[0];
        const res = await fetch(`${url}/v2/${endpoint}/runsync`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: readFileSync(join(dir, 'test_input.json'), 'utf8'),
          signal: AbortSignal.timeout(170_000),
        });
        const body = (await res.json()) as { status: string; delayTime: number };
        expect(body.status, `${JSON.stringify(body).slice(0, 500)}\n${out.slice(-3000)}`).toBe('COMPLETED');
        console.log(`${template.name}: first job through berth dev, cold start delayTime ${body.delayTime} ms`);
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('close', r));
      }
    }, 240_000);
  });
}
