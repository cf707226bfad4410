import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { TEMPLATES } from './templates.js';

/**
 * The real `create-worker` binary, non-interactively (stdin is not a TTY), without installing: help, bad flags,
 * a non-empty folder, and the files it writes. Each template created, installed and run (npm test, berth test,
 * berth build, berth dev) is tests/create-worker/create-worker.test.ts, in the system project.
 */
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(REPO, 'packages/create-worker/bin/create-worker.js');
const work = mkdtempSync(join(tmpdir(), 'create-worker-unit-'));
afterAll(() => rm(work, { recursive: true, force: true }));

function run(cmd: string, args: string[], cwd: string, timeout: number) {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}`, stdout: r.stdout };
}

describe('create-worker (unit)', () => {
  it('--help lists every template; bad flags exit 2', () => {
    const help = run(process.execPath, [BIN, '--help'], work, 10_000);
    expect(help.code).toBe(0);
    for (const t of TEMPLATES) expect(help.stdout).toContain(t.name);
    expect(run(process.execPath, [BIN, 'x', '--template', 'nope'], work, 10_000).out).toContain(
      'unknown template "nope" (templates: basic',
    );
    expect(run(process.execPath, [BIN, 'x', '--bogus'], work, 10_000).code).toBe(2);
  });

  it('refuses a non-empty folder without --force', () => {
    const r = run(process.execPath, [BIN, REPO, '--no-install'], work, 10_000);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/is not empty; choose another folder or pass --force/);
  });

  it('without --local, package.json names the published versions; _gitignore becomes .gitignore', () => {
    const r = run(process.execPath, [BIN, 'published', '--no-install'], work, 30_000);
    expect(r.code, r.out).toBe(0);
    const pkg = JSON.parse(readFileSync(join(work, 'published/package.json'), 'utf8'));
    expect(pkg).toMatchObject({
      name: 'published',
      dependencies: { '@berth/worker': '^0.1.0' },
      devDependencies: { '@berth/cli': '^0.1.0' },
    });
    expect(pkg.scripts).toMatchObject({ dev: 'berth dev', test: 'vitest run', build: 'berth build' });
    expect(pkg.allowScripts).toEqual({ 'better-sqlite3': true, esbuild: true });
    expect(existsSync(join(work, 'published/.gitignore'))).toBe(true);
    expect(existsSync(join(work, 'published/_gitignore'))).toBe(false);
    expect(JSON.parse(readFileSync(join(work, 'published/berth.config.json'), 'utf8')).endpoints).toHaveProperty(
      'published',
    );
    expect(readFileSync(join(work, 'published/README.md'), 'utf8')).toContain('npm run dev');
  });

  it("writes the template's allowScripts into the project; the workspace templates carry none (npm warns there)", () => {
    const r = run(process.execPath, [BIN, 'pictures', '--template', 'image', '--no-install'], work, 30_000);
    expect(r.code, r.out).toBe(0);
    const pkg = JSON.parse(readFileSync(join(work, 'pictures/package.json'), 'utf8'));
    expect(pkg.allowScripts).toEqual({
      'better-sqlite3': true,
      esbuild: true,
      'onnxruntime-node': false,
      sharp: true,
      protobufjs: false,
    });
    for (const t of TEMPLATES) {
      const own = JSON.parse(readFileSync(join(REPO, 'templates', t.name, 'package.json'), 'utf8'));
      expect(own, t.name).not.toHaveProperty('allowScripts');
    }
  });
});
