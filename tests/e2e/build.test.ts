import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleWorker } from '../../packages/cli/src/build/bundle.js';
import { checkDockerfile } from '../../packages/cli/src/build/dockerfile-check.test-helpers.js';
import { BIN, REPO_ROOT } from './harness.test-helpers.js';

mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const project = mkdtempSync(join(REPO_ROOT, '.berth', 'build-'));
// The deployable folder is run from here: outside the repository, so nothing resolves from its node_modules.
const empty = mkdtempSync(join(tmpdir(), 'berth-deploy-'));
const children: ChildProcess[] = [];
const MODELS_DIR = process.env['BERTH_MODELS_DIR'] ?? join(REPO_ROOT, '../shared/models');
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(project, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
});

writeFileSync(join(project, 'words.ts'), `export const shout = (s: string): string => s.toUpperCase() + '!';\n`);
writeFileSync(
  join(project, 'hello.ts'),
  `import { start } from '@berth/worker';\nimport { shout } from './words.js';\nstart({ handler: (job) => ({ text: shout(String(job.input.name)) }) });\n`,
);
writeFileSync(join(project, 'berth.config.json'), JSON.stringify({ endpoints: { hello: { worker: './hello.ts' } } }));

/** Runs a process until a stdout line matches; returns the match. */
function lineFrom(child: ChildProcess, re: RegExp, ms: number): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no ${re} within ${ms} ms:\n${out}`)), ms);
    const on = (d: Buffer) => {
      out += d.toString();
      const m = out.match(re);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout?.on('data', on);
    child.stderr?.on('data', on);
  });
}

describe('berth build', () => {
  it('writes a deployable folder with progress; its Dockerfiles parse and COPY only files that exist', () => {
    const r = spawnSync(process.execPath, [BIN, 'build'], {
      cwd: project,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\[1\/1\] hello: bundling hello\.ts with esbuild\.\.\.$/m);
    expect(r.stdout).toMatch(/^\[1\/1\] hello: worker\.mjs \d+ KiB in \d+ ms; native dependencies: none$/m);
    const out = join(project, 'build/hello');
    expect(readdirSync(out).sort()).toEqual([
      '.dockerignore',
      'Dockerfile',
      'Dockerfile.cuda',
      'deploy.json',
      'k8s',
      'package.json',
      'worker.mjs',
      'worker.mjs.map',
    ]);
    expect(readdirSync(join(out, 'k8s')).sort()).toEqual(['deployment.yaml', 'scaledobject.yaml']);
    expect(JSON.parse(readFileSync(join(out, 'package.json'), 'utf8'))).toMatchObject({
      type: 'module',
      scripts: { start: 'node worker.mjs' },
      dependencies: {},
    });
    for (const [name, base] of [
      ['Dockerfile', 'ARG BASE_IMAGE=node:22-bookworm-slim'],
      ['Dockerfile.cuda', 'ARG CUDA_IMAGE=nvidia/cuda:'],
    ] as const) {
      const text = readFileSync(join(out, name), 'utf8');
      const check = checkDockerfile(text, out);
      expect(check.problems).toEqual([]);
      expect(check.instructions[0]).toBe('ARG');
      expect(check.instructions.at(-1)).toBe('CMD');
      expect(text).toContain(base);
      expect(text).toContain('CMD ["node", "worker.mjs"]');
      expect(text).toContain('BERTH_ENDPOINT_ID=hello');
      // No native dependency: nothing installed, and never npm inside the image.
      expect(text).not.toMatch(/npm (install|ci)|node_modules/);
    }
    expect(checkDockerfile('FROM x\nCOPY nothing-here ./\n', out).problems).toEqual([
      'no CMD',
      `COPY nothing-here: not found in ${out}`,
    ]);
    expect(checkDockerfile('ARG A=b\nRUN true\nFROM x\nCMD x\n', out).problems).toEqual([
      'the first instruction is not FROM',
    ]);
  }, 90_000);

  it('the bundle runs standalone from an empty folder against a real berth serve and completes a job', async () => {
    cpSync(join(project, 'build/hello'), empty, { recursive: true });
    expect(existsSync(join(empty, 'node_modules'))).toBe(false);
    const key = 'berth_build_test';
    const token = 'berthw_build_test';
    const serve = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--store', 'memory', '--endpoint', 'hello'], {
      env: { ...process.env, BERTH_API_KEY: key, BERTH_WORKER_TOKEN: token, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(serve);
    const url = (await lineFrom(serve, /ready at (http:\/\/[^\s)]+)/, 20_000))[1]!;
    const worker = spawn(process.execPath, ['worker.mjs'], {
      cwd: empty,
      env: {
        PATH: process.env['PATH'] ?? '',
        BERTH_URL: url,
        BERTH_WORKER_TOKEN: token,
        BERTH_ENDPOINT_ID: 'hello',
        BERTH_WORKER_ID: 'bundled-1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(worker);
    await lineFrom(worker, /connected to the control plane/, 20_000);
    const res = await fetch(`${url}/v2/hello/runsync`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: { name: 'container' } }),
    });
    expect(await res.json()).toMatchObject({
      status: 'COMPLETED',
      output: { text: 'CONTAINER!' },
      workerId: 'bundled-1',
    });
  }, 60_000);

  it('a model worker (templates/text) runs from an empty folder with only its declared native dependency installed', async () => {
    const out = join(project, 'text-build');
    // berth build installs the dependencies too (npm ci): minutes on a busy machine.
    const r = spawnSync(process.execPath, [BIN, 'build', '--out', out], {
      cwd: join(REPO_ROOT, 'templates/text'),
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/native dependencies: @huggingface\/transformers@\d/);
    const deploy = mkdtempSync(join(tmpdir(), 'berth-deploy-text-'));
    try {
      // berth build installed the dependencies (npm ci from the lock it cut out of the repository's): copy as the Dockerfile does.
      expect(r.stdout).toMatch(/npm ci \(lock cut from the project's package-lock\.json\) for linux\/(x64|arm64)/);
      cpSync(join(out, 'my-worker'), deploy, { recursive: true });
      const lock = JSON.parse(readFileSync(join(deploy, 'package-lock.json'), 'utf8')) as {
        packages: Record<string, { version?: string }>;
      };
      expect(lock.packages['node_modules/@huggingface/transformers']?.version).toMatch(/^\d/);
      expect(readdirSync(join(deploy, 'node_modules'))).not.toContain('@berth');
      // Other platforms' onnxruntime binaries are pruned.
      expect(readdirSync(join(deploy, 'node_modules/onnxruntime-node/bin/napi-v6'))).toEqual(['linux']);
      const key = 'berth_build_text';
      const token = 'berthw_build_text';
      const serve = spawn(
        process.execPath,
        [BIN, 'serve', '--port', '0', '--store', 'memory', '--endpoint', 'my-worker'],
        {
          env: { ...process.env, BERTH_API_KEY: key, BERTH_WORKER_TOKEN: token, NO_COLOR: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      children.push(serve);
      const url = (await lineFrom(serve, /ready at (http:\/\/[^\s)]+)/, 20_000))[1]!;
      const worker = spawn(process.execPath, ['worker.mjs'], {
        cwd: deploy,
        env: {
          PATH: process.env['PATH'] ?? '',
          BERTH_URL: url,
          BERTH_WORKER_TOKEN: token,
          BERTH_ENDPOINT_ID: 'my-worker',
          BERTH_MODELS_DIR: MODELS_DIR,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(worker);
      await lineFrom(worker, /connected to the control plane/, 60_000);
      const res = await fetch(`${url}/v2/my-worker/runsync`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input: { prompt: 'Once upon a time', max_new_tokens: 12 } }),
      });
      const body = (await res.json()) as { status: string; output: { text: string }[] };
      expect(body.status).toBe('COMPLETED');
      expect(body.output.map((c) => c.text).join('')).toMatch(/there was a little/);
    } finally {
      rmSync(deploy, { recursive: true, force: true });
    }
  }, 360_000);

  it('native packages stay out of the bundle and are declared at the installed version', async () => {
    writeFileSync(
      join(project, 'native.ts'),
      `import sharp from 'sharp';\nimport { start } from '@berth/worker';\nstart({ handler: async () => ({ v: typeof sharp }) });\n`,
    );
    const outfile = join(project, 'native-out/worker.mjs');
    const r = await bundleWorker({ entry: join(project, 'native.ts'), outfile, cwd: project });
    const version = (
      JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules/sharp/package.json'), 'utf8')) as { version: string }
    ).version;
    expect(r.dependencies).toEqual({ sharp: version });
    expect(readFileSync(outfile, 'utf8')).toMatch(/from "sharp"/);
  });

  it('a handler that does not bundle: exit 1 naming it; an unknown endpoint: exit 2', () => {
    writeFileSync(join(project, 'broken.ts'), `import { nope } from './missing.js';\nnope();\n`);
    writeFileSync(
      join(project, 'broken.config.json'),
      JSON.stringify({ endpoints: { broken: { worker: './broken.ts' } } }),
    );
    const r = spawnSync(process.execPath, [BIN, 'build', '--config', 'broken.config.json', '--out', 'build2'], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/\[1\/1\] broken: bundle failed:[\s\S]*missing/);
    const u = spawnSync(process.execPath, [BIN, 'build', '--endpoint', 'nope'], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(u.status).toBe(2);
    expect(u.stderr).toContain('unknown endpoint nope (endpoints: hello)');
  }, 90_000);
});
