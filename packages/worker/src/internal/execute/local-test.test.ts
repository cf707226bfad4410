import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../logger.js';
import { ConfigError } from '../../options.js';
import { findTestInput, parseTestInput, runLocalTest, testInputDirs } from './local-test.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-local-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('local test input', () => {
  it('accepts {"input": ...} or the input itself', () => {
    expect(parseTestInput('{"input":{"a":1}}', 'x')).toEqual({ a: 1 });
    expect(parseTestInput('{"a":1}', 'x')).toEqual({ a: 1 });
    expect(() => parseTestInput('[1]', 'x')).toThrow('x must hold a JSON object');
    expect(() => parseTestInput('{', 'x')).toThrow('x is not valid JSON');
  });

  it('reads --test-input, --test_input and --test-input=', () => {
    expect(findTestInput(['--test-input', '{"a":1}'], [])).toEqual({ input: { a: 1 }, source: '--test-input' });
    expect(findTestInput(['--test_input', '{"input":{"b":2}}'], [])?.input).toEqual({ b: 2 });
    expect(findTestInput(['--test-input={"c":3}'], [])?.input).toEqual({ c: 3 });
    expect(() => findTestInput(['--test-input'], [])).toThrow(ConfigError);
  });

  it('falls back to test_input.json in the given directories, the command line wins', () => {
    expect(findTestInput([], [dir])).toBeUndefined();
    writeFileSync(join(dir, 'test_input.json'), '{"input": {"from": "file"}}');
    expect(findTestInput([], [dir])).toEqual({ input: { from: 'file' }, source: join(dir, 'test_input.json') });
    expect(findTestInput(['--test-input', '{"from":"cli"}'], [dir])?.input).toEqual({ from: 'cli' });
  });

  it('searches the entry script directory, then cwd', () => {
    expect(testInputDirs(['node', '/srv/app/main.js'], '/work')).toEqual(['/srv/app', '/work']);
    expect(testInputDirs(['node'], '/work')).toEqual(['/work']);
  });
});

describe('runLocalTest', () => {
  const log = createLogger({ level: 'silent' });
  it('COMPLETED with exit code 0', async () => {
    const out = await runLocalTest(
      { handler: (job) => ({ got: job.input }), returnAggregateStream: false },
      { a: 1 },
      log,
    );
    expect(out).toEqual({ body: { id: 'local-test', status: 'COMPLETED', output: { got: { a: 1 } } }, code: 0 });
  });

  it('FAILED with exit code 1', async () => {
    const out = await runLocalTest(
      { handler: () => Promise.reject(new Error('nope')), returnAggregateStream: false },
      {},
      log,
    );
    expect(out).toEqual({ body: { id: 'local-test', status: 'FAILED', error: 'nope' }, code: 1 });
  });

  it('applies the retry policy as the connected runtime does', async () => {
    let calls = 0;
    const flaky = () => (++calls < 2 ? Promise.reject(new Error('flaky')) : 'second try');
    const out = await runLocalTest(
      { handler: flaky, returnAggregateStream: false, retry: { attempts: 2, backoffMs: 1 } },
      {},
      log,
    );
    expect(out).toEqual({ body: { id: 'local-test', status: 'COMPLETED', output: 'second try' }, code: 0 });
    expect(calls).toBe(2);
  });
});
