// berth dev's pretty log lines on a terminal: text a job carries, logged by its handler, cannot drive the terminal.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startBerthDev } from './harness.test-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'berth-pretty-escape-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

describe('berth dev: a handler logging hostile job input', () => {
  it('shows ESC, BEL and CR escaped in the pretty line, not raw', { timeout: 90_000 }, async () => {
    const config = join(tmp, 'berth.config.json');
    const handler = join(REPO_ROOT, 'tests/e2e/fixtures/log-input-handler.ts');
    writeFileSync(config, JSON.stringify({ endpoints: { logs: { worker: handler } } }));
    await using berth = await startBerthDev({ config, waitForWorkers: ['logs'] });
    const text = 'hi\x1b]0;pwned\x07\x1b[2J\rfake: job completed\x9b31m';
    const { body } = await berth.post('/v2/logs/runsync', { input: { text } });
    expect(body).toMatchObject({ status: 'COMPLETED' });
    const [line] = await berth.waitForLine(/prompt: hi/, 30_000);
    expect(line).not.toMatch(CONTROL);
    expect(berth.output).toContain('prompt: hi\\u001b]0;pwned\\u0007\\u001b[2J\\rfake: job completed\\u009b31m');
    expect(berth.output).not.toContain('\x1b]0;pwned');
  });
});
