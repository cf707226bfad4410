import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The quickstart's first command from a clone, with no registry holding Berth: `npm run create -- <dir>` at the
 * repository root (scripts/create.mjs), the real command a user types. npm runs with `ignore-scripts` for the
 * reason create-worker.test.ts gives (better-sqlite3 would compile for minutes here).
 */
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'create-from-clone-'));
afterAll(() => rm(work, { recursive: true, force: true }), 120_000);

const npm = (args: string[], cwd: string, timeout: number) => {
  const r = spawnSync('npm', args, {
    cwd,
    encoding: 'utf8',
    timeout,
    env: { ...process.env, NO_COLOR: '1', npm_config_ignore_scripts: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
};

describe('npm run create (create-worker from a clone)', () => {
  it('folder relative to where npm ran; --local is this checkout; no install with --no-install', () => {
    const r = npm(
      ['--prefix', REPO, 'run', 'create', '--', 'rel-worker', '--template', 'image', '--no-install'],
      work,
      120_000,
    );
    expect(r.code, r.out.slice(-2000)).toBe(0);
    const pkg = JSON.parse(readFileSync(join(work, 'rel-worker/package.json'), 'utf8'));
    expect(pkg.dependencies['@berth/worker']).toMatch(/^file:vendor\/berth-worker-.*\.tgz$/);
    expect(existsSync(join(work, 'rel-worker/src/handler.ts'))).toBe(true);
    expect(r.out).toContain(`from ${REPO.replace(/\/$/, '')} into vendor/`);
  }, 130_000);

  it('creates, installs and the new project passes its tests (npm test)', () => {
    const dir = join(work, 'my-worker');
    const r = npm(['run', 'create', '--', dir, '--template', 'basic'], REPO, 300_000);
    expect(r.code, r.out.slice(-3000)).toBe(0);
    expect(r.out).not.toMatch(/404|E404/);
    expect(existsSync(join(dir, 'node_modules/@berth/worker/dist/index.js'))).toBe(true);
    const t = npm(['test'], dir, 120_000);
    expect(t.code, t.out.slice(-3000)).toBe(0);
    expect(t.out).toMatch(/Tests\s+\d+ passed/);
  }, 440_000);

  it('--help passes through (and builds nothing)', () => {
    const r = npm(['run', 'create', '--', '--help'], REPO, 30_000);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Usage: create-worker');
    expect(r.out).not.toContain('Building the Berth packages');
  });
});
