import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT } from './harness.test-helpers.js';

mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const dir = mkdtempSync(join(REPO_ROOT, '.berth', 'test-cmd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(
  join(dir, 'add.ts'),
  `import { start } from '@berth/worker';
start({ handler: (job) => {
  const { a, b } = job.input as { a: unknown; b: unknown };
  if (typeof a !== 'number' || typeof b !== 'number') throw new Error('a and b must be numbers');
  job.progress({ half: true });
  return { sum: a + b };
} });
`,
);
writeFileSync(join(dir, 'test_input.json'), JSON.stringify({ input: { a: 2, b: 3 } }));
writeFileSync(
  join(dir, 'berth.config.json'),
  JSON.stringify({ endpoints: { add: { worker: './add.ts' }, other: { worker: './add.ts' } } }),
);

function berthTest(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, 'test', ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', ...env },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('berth test', () => {
  it('test_input.json of the config folder through the first endpoint: prints the result, exit 0', () => {
    const r = berthTest([]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toEqual({
      id: 'local-test',
      status: 'COMPLETED',
      output: { sum: 5 },
    });
    // The worker runtime's own local mode ran it: its log lines (progress included) are there.
    expect(r.stderr).toMatch(/"jobId":"local-test".*"msg":"progress"/);
  }, 30_000);

  it('--input and --file, with or without the {"input": ...} wrapper; a handler file instead of the config', () => {
    expect(JSON.parse(berthTest(['--input', '{"a": 1, "b": 1}']).stdout)).toMatchObject({ output: { sum: 2 } });
    writeFileSync(join(dir, 'other.json'), JSON.stringify({ input: { a: 10, b: -1 } }));
    expect(JSON.parse(berthTest(['add.ts', '--file', 'other.json']).stdout)).toMatchObject({ output: { sum: 9 } });
    expect(JSON.parse(berthTest(['--endpoint', 'other', '-i', '{"input":{"a":0,"b":0}}']).stdout)).toMatchObject({
      output: { sum: 0 },
    });
  }, 60_000);

  it('a failing job: exit 1 with the error; BERTH_URL in the environment does not make it connect', () => {
    const r = berthTest(['--input', '{"a": "x"}'], { BERTH_URL: 'http://127.0.0.1:1' });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ id: 'local-test', status: 'FAILED', error: 'a and b must be numbers' });
  }, 30_000);

  it('bad usage: exit 2 with a message', () => {
    expect(berthTest(['--input', '{nope']).stderr).toMatch(/--input is not valid JSON/);
    expect(berthTest(['--input', '[1]']).code).toBe(2);
    expect(berthTest(['--input', '{}', '--file', 'x.json']).stderr).toContain('give --input or --file, not both');
    expect(berthTest(['--endpoint', 'zzz']).stderr).toContain('no endpoint "zzz"');
    expect(berthTest(['missing.ts']).code).toBe(2);
  }, 30_000);
});

describe('berth test: a handler that does not load', () => {
  it('a top-level throw is one line with the place in the code, not a raw stack trace; exit 1', () => {
    writeFileSync(
      join(dir, 'needs-model.ts'),
      `import { start } from '@berth/worker';\nconst load = async () => {\n  throw new Error('set BERTH_MODELS_DIR to the folder holding tiny-sd/');\n};\nawait load();\nstart({ handler: () => 1 });\n`,
    );
    const r = berthTest(['needs-model.ts', '--input', '{}']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `berth test: the handler did not load: set BERTH_MODELS_DIR to the folder holding tiny-sd/\n  at ${join(dir, 'needs-model.ts')}:3:9\n`,
    );
  }, 30_000);
});
