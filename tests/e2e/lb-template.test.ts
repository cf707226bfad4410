import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT, startBerthDev } from './harness.test-helpers.js';

// `create-worker --template http` (issue #39): the generated project, without an install, run by this checkout's
// real `berth dev`: its `node server.mjs` workers started from zero, /generate answered through the proxy.
const CREATE = join(REPO_ROOT, 'packages/create-worker/bin/create-worker.js');
mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const tmp = mkdtempSync(join(REPO_ROOT, '.berth', 'lb-template-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('create-worker --template http under berth dev', () => {
  it('scaffolds a Node server whose own tests pass, and berth dev serves /v2/<ep>/lb/generate from zero', async () => {
    const dir = join(tmp, 'Echo Server');
    const made = spawnSync(process.execPath, [CREATE, dir, '--template', 'http', '--no-install'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(made.status, `${made.stdout}\n${made.stderr}`).toBe(0);
    const config = JSON.parse(readFileSync(join(dir, 'berth.config.json'), 'utf8'));
    expect(config.endpoints['echo-server']).toMatchObject({ type: 'http', command: 'node server.mjs' });
    expect(readFileSync(join(dir, 'Dockerfile'), 'utf8')).toMatch(/^FROM node:22-bookworm-slim$[\s\S]*^EXPOSE 8080$/m);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('/v2/echo-server/lb/generate');

    // The project's `npm test` (node --test, no dependencies).
    const own = spawnSync(process.execPath, ['--test'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(own.status, `${own.stdout}\n${own.stderr}`).toBe(0);
    expect(own.stdout).toMatch(/# pass 2/);

    await using berth = await startBerthDev({ config: join(dir, 'berth.config.json') });
    const input = JSON.parse(readFileSync(join(dir, 'test_input.json'), 'utf8'));
    const r = await berth.fetch('/v2/echo-server/lb/generate', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    const worker = r.headers.get('x-runpod-worker-id');
    expect(r.status).toBe(200);
    expect(worker).toMatch(/^echo-server-[a-z0-9]+-1$/);
    // The worker's id reached the server as RUNPOD_POD_ID; its input came back whole.
    expect(await r.json()).toEqual({ generated_text: `Generated text for: ${input.prompt}`, input, worker });

    const bad = await berth.fetch('/v2/echo-server/lb/generate', { method: 'POST', body: '{"prompt": 3}' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'expected {"prompt": "<text>"}' });
    expect((await berth.fetch('/v2/echo-server/lb/stats')).status).toBe(200);
  }, 90_000);

  it('berth build checks its Dockerfile exposes the port and writes a Deployment and a Service for it', () => {
    const dir = join(tmp, 'gen');
    expect(spawnSync(process.execPath, [CREATE, dir, '--template', 'http', '--no-install']).status).toBe(0);
    const build = () =>
      spawnSync(process.execPath, [BIN, 'build', '--config', join(dir, 'berth.config.json')], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 30_000,
      });
    const r = build();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('[1/1] gen: Dockerfile exposes 8080 (worker port 8080); wrote build/gen/k8s/');
    expect(r.stdout).toContain('docker build -t gen .');
    const service = readFileSync(join(dir, 'build/gen/k8s/service.yaml'), 'utf8');
    expect(service).toMatch(/kind: "Service"[\s\S]*port: 8080/);
    expect(readFileSync(join(dir, 'build/gen/k8s/deployment.yaml'), 'utf8')).toMatch(/containerPort: 8080/);

    // Without EXPOSE the build fails, saying what to add.
    const docker = readFileSync(join(dir, 'Dockerfile'), 'utf8');
    writeFileSync(join(dir, 'Dockerfile'), docker.replace(/^EXPOSE .*$/m, ''));
    const bad = build();
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(
      '[1/1] gen: Dockerfile: no EXPOSE: add `EXPOSE 8080`, the port the server listens on (PORT)',
    );
  });
});
