import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BERTH_PACKAGES } from '../../packages/create-worker/src/local.js';
import { readyPort } from '../e2e/harness.test-helpers.js';

/**
 * The packages as users get them: every package published to a local Verdaccio (127.0.0.1, storage in a temp
 * folder, no uplinks: nothing is proxied, nothing published leaves the machine), then `npx create-worker my-app
 * --template basic` from that registry, `npm install`, `npm test`, `npm run dev` answering a /runsync. @berth/*
 * resolve to the local registry (`@berth:registry`), create-worker from its tarball there (an unrelated
 * `create-worker` may exist on the public registry), everything else from the usual registry.
 *
 * npm runs with `ignore-scripts` and `berth dev` with BERTH_STORE=memory, as in create-worker.test.ts
 * (better-sqlite3 has no prebuilt binary reachable here); `npm install-scripts ls` still checks that the
 * generated package.json's `allowScripts` covers every install script, so npm 11's first install does not warn.
 */
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'create-registry-'));
afterAll(() => rm(work, { recursive: true, force: true }), 60_000);

const freePort = () =>
  new Promise<number>((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });

/** Starts Verdaccio; answers its URL, or why it cannot run (the test's title then says so). */
async function startVerdaccio(): Promise<{ url: string; child: ChildProcess } | { why: string }> {
  let bin: string;
  try {
    bin = createRequire(join(REPO, 'packages/create-worker/package.json')).resolve('verdaccio/bin/verdaccio');
  } catch {
    return { why: 'the verdaccio devDependency is not installed' };
  }
  for (const p of BERTH_PACKAGES)
    if (!existsSync(join(REPO, 'packages', p, 'dist'))) return { why: `packages/${p}/dist is missing: npm run build` };
  const port = await freePort();
  const config = join(work, 'verdaccio.yaml');
  // No `uplinks` and no `proxy`: a package not published here is a 404, never fetched from elsewhere.
  writeFileSync(
    config,
    [
      `storage: ${join(work, 'storage')}`,
      'auth:',
      '  htpasswd:',
      `    file: ${join(work, 'htpasswd')}`,
      'uplinks: {}',
      'packages:',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      'logs: { type: stdout, format: pretty, level: warn }',
      'publish:',
      '  allow_offline: true',
      '',
    ].join('\n'),
  );
  const child = spawn(process.execPath, [bin, '--config', config, '--listen', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && child.exitCode === null) {
    const ok = await fetch(`${url}/-/ping`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { url, child };
    await new Promise((r) => setTimeout(r, 250));
  }
  stop(child);
  return { why: `verdaccio did not answer /-/ping within 60 s: ${log.slice(-300).replace(/\s+/g, ' ')}` };
}

function stop(child: ChildProcess | undefined): void {
  if (child?.pid && child.exitCode === null) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}

const registry = await startVerdaccio();
afterAll(() => stop('child' in registry ? registry.child : undefined));
const why = 'why' in registry ? registry.why : undefined;

describe('registry round trip (local Verdaccio)', () => {
  it.skipIf(why !== undefined)(
    why
      ? `skipped: ${why}`
      : 'publish every package, npx create-worker --template basic from the registry, npm install (allowScripts covers every install script), npm test, npm run dev answers a /runsync',
    async () => {
      const { url } = registry as { url: string };
      // A user on Verdaccio: an account, and npm pointed at it for @berth/*.
      const user = await fetch(`${url}/-/user/org.couchdb.user:berth-test`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'berth-test', password: 'berth-test-password', type: 'user', roles: [] }),
      });
      expect(user.status, await user.clone().text()).toBe(201);
      const { token } = (await user.json()) as { token: string };
      const upstream = spawnSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).stdout.trim();
      const npmrc = join(work, 'npmrc');
      const host = url.replace(/^http:/, '');
      writeFileSync(npmrc, `registry=${upstream}\n@berth:registry=${url}/\n${host}/:_authToken=${token}\n`);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        NO_COLOR: '1',
        NPM_CONFIG_USERCONFIG: npmrc,
        npm_config_ignore_scripts: 'true',
        npm_config_update_notifier: 'false',
      };
      for (const k of Object.keys(env)) if (/^npm_(package|lifecycle)_/.test(k)) delete env[k];
      const run = (cmd: string, args: string[], cwd: string, timeout: number) => {
        const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout, stdio: ['ignore', 'pipe', 'pipe'] });
        return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
      };

      // 1. Publish, dependencies first; create-worker's prepack copies the templates in.
      for (const dir of [...BERTH_PACKAGES.map((p) => `packages/${p}`), 'packages/create-worker']) {
        const r = run('npm', ['publish', '--registry', `${url}/`, '--ignore-scripts=false'], join(REPO, dir), 120_000);
        expect(r.code, `${dir}: ${r.out.slice(-2000)}`).toBe(0);
      }
      const meta = (await (await fetch(`${url}/create-worker`)).json()) as {
        'dist-tags': { latest: string };
        versions: Record<string, { dist: { tarball: string } }>;
      };
      const tarball = meta.versions[meta['dist-tags'].latest]!.dist.tarball;
      expect(tarball.startsWith(`${url}/`)).toBe(true);

      // 2. npx create-worker my-app --template basic, from the registry's tarball; it installs the project.
      const apps = join(work, 'apps');
      mkdirSync(apps);
      const created = run(
        'npx',
        ['--yes', `--package=${tarball}`, '--', 'create-worker', 'my-app', '--template', 'basic'],
        apps,
        400_000,
      );
      expect(created.code, created.out.slice(-3000)).toBe(0);
      const dir = join(apps, 'my-app');
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      expect(pkg.allowScripts).toEqual({ 'better-sqlite3': true, esbuild: true });
      expect(readFileSync(join(dir, 'node_modules/@berth/cli/package.json'), 'utf8')).toContain('"version": "0.1.0"');

      // 3. npm install again (as the README's steps say), then every install script is covered by allowScripts.
      const installed = run('npm', ['install', '--no-audit', '--no-fund'], dir, 300_000);
      expect(installed.code, installed.out.slice(-3000)).toBe(0);
      expect(installed.out).not.toContain('not yet covered by allowScripts');
      const scripts = run('npm', ['install-scripts', 'ls'], dir, 60_000);
      expect(scripts.out).not.toContain('not yet covered');

      // 4. npm test.
      const tested = run('npm', ['test'], dir, 180_000);
      expect(tested.code, tested.out.slice(-3000)).toBe(0);
      expect(tested.out).toMatch(/Tests\s+\d+ passed/);

      // 5. npm run dev answers a /runsync with test_input.json.
      const key = 'berth_round_trip_key';
      const dev = spawn('npm', ['run', 'dev', '--', '--port', '0'], {
        // the OS picks the port; the ready line says it
        cwd: dir,
        env: { ...env, BERTH_API_KEY: key, BERTH_STORE: 'memory' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      let out = '';
      dev.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      dev.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      try {
        const deadline = Date.now() + 90_000;
        while (readyPort(out) === undefined) {
          if (Date.now() > deadline || dev.exitCode !== null) throw new Error(`npm run dev did not start:\n${out}`);
          await new Promise((r) => setTimeout(r, 200));
        }
        const port = readyPort(out);
        const res = await fetch(`http://127.0.0.1:${port}/v2/my-app/runsync?wait=60000`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: readFileSync(join(dir, 'test_input.json')),
        });
        const job = (await res.json()) as { status: string };
        expect(job.status, `${JSON.stringify(job)}\n${out.slice(-2000)}`).toBe('COMPLETED');
      } finally {
        stop(dev);
      }
    },
    900_000,
  );
});
