import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { endpointIdFrom } from './files.js';
import { main, packageManager, type CreateIo } from './index.js';

const work = mkdtempSync(join(tmpdir(), 'create-worker-tty-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function fakeIo(tty: boolean, answers: string[]) {
  const stdin = Object.assign(new PassThrough(), { isTTY: tty });
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  stdout.on('data', (d: Buffer) => {
    out += d.toString();
    // Answer each question when it is asked.
    if (/: $/.test(out) && answers.length) stdin.write(`${answers.shift()}\n`);
  });
  stderr.on('data', (d: Buffer) => (out += d.toString()));
  const io: CreateIo = { stdin, stdout, stderr, env: {}, cwd: work };
  return { io, output: () => out };
}

describe('create-worker in a terminal', () => {
  it('asks for the folder and the template (by number or name, re-asking on a bad answer)', async () => {
    const { io, output } = fakeIo(true, ['My Story Bot', 'nope', '2']);
    expect(await main(['--no-install'], io)).toBe(0);
    expect(output()).toContain('Project folder (berth-worker): ');
    expect(output()).toMatch(/1\. basic .*\n\s+2\. text /);
    expect(output()).toContain('No template "nope".');
    const dir = join(work, 'My Story Bot');
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies).toHaveProperty(
      '@huggingface/transformers',
    );
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'berth.config.json'), 'utf8')).endpoints)).toEqual([
      'my-story-bot',
    ]);
    expect(output()).toContain('Note: The model is read from $BERTH_MODELS_DIR/stories260K');
  });

  it('flags answer the questions: nothing is asked', async () => {
    const { io, output } = fakeIo(true, []);
    expect(await main(['flagged', '--template', 'image', '--no-install'], io)).toBe(0);
    expect(output()).not.toContain('Project folder');
    expect(existsSync(join(work, 'flagged/src/generate.ts'))).toBe(true);
  });

  it('without a TTY nothing is asked: defaults', async () => {
    const { io, output } = fakeIo(false, []);
    expect(await main(['--no-install'], io)).toBe(0);
    expect(output()).not.toContain('?');
    expect(existsSync(join(work, 'berth-worker/src/handler.ts'))).toBe(true);
    expect(output()).toContain('Created berth-worker (template basic, endpoint berth-worker)');
  });
});

describe('helpers', () => {
  it.each([
    ['My Worker', 'my-worker'],
    ['--x__y--', 'x-y'],
    ['ÉtÉ', 't'],
    ['!!!', 'worker'],
    ['a'.repeat(80), 'a'.repeat(63)],
  ])('endpointIdFrom(%j) = %j', (name, id) => {
    expect(endpointIdFrom(name)).toBe(id);
    expect(id).toMatch(/^[a-z0-9][a-z0-9-]{0,62}$/);
  });

  it('packageManager from npm_config_user_agent', () => {
    expect(packageManager({ npm_config_user_agent: 'pnpm/9.0.0 npm/? node/v20' })).toBe('pnpm');
    expect(packageManager({ npm_config_user_agent: 'yarn/1.22.0' })).toBe('yarn');
    expect(packageManager({})).toBe('npm');
  });
});
