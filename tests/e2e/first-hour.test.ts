// The first hour of a new user, scripted (issue #19): the README's first command (`npm start`) and its curl
// walkthrough verbatim (only the port differs: tests use port 0), the sample curl berth dev prints, the playground
// and API reference pages. create-worker from a clone is tests/create-worker/from-clone.test.ts, each template's
// test and dev tests/create-worker/create-worker.test.ts, the playground in Chromium playground-session.test.ts (screenshots under
// test-artifacts/playground/).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startBerthDev, type BerthDev } from './harness.test-helpers.js';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const bash = (script: string, timeout = 60_000) =>
  new Promise<string>((ok, fail) =>
    execFile('bash', ['-c', script], { timeout, maxBuffer: 4 << 20 }, (err, stdout, stderr) =>
      err ? fail(new Error(`${err.message}\n${stderr}\n${stdout}`)) : ok(stdout),
    ),
  );
/** The fenced block of README.md that follows `after`. */
function blockAfter(after: string): string {
  const at = README.indexOf(after);
  expect(at, `README.md has "${after}"`).toBeGreaterThan(-1);
  const m = /```(?:bash|sh)\n([\s\S]*?)```/.exec(README.slice(at));
  return m![1]!;
}

let berth: BerthDev;
beforeAll(async () => {
  expect(README).toContain('npm install && npm start');
  expect(README).toContain('BERTH_API_KEY=dev-key npm start');
  berth = await startBerthDev({
    npmStart: true,
    apiKey: 'dev-key',
    readyTimeoutMs: 120_000,
    waitForWorkers: ['echo', 'sleep', 'stream', 'fail'],
  });
}, 150_000);
afterAll(async () => {
  await berth?.[Symbol.asyncDispose]();
});

describe("the README's first hour", () => {
  it('`npm start` builds and starts berth dev on examples/basic: ready line, key, playground and curl lines', () => {
    expect(berth.output).toMatch(/berth ready at http:\/\/127\.0\.0\.1:\d+ \(endpoints: echo, stream, sleep, fail\)/);
    expect(berth.output).toContain('API key: dev-key');
    expect(berth.output).toContain(`Playground: ${berth.url}/#key=dev-key`);
  });

  it('the sample curl berth dev prints completes', async () => {
    // Without a test_input.json the lines follow the worker's hello (they carry a sample of its input schema).
    const [line] = await berth.waitForLine(/^\s*curl -s -X POST \S+\/runsync .*$/m, 20_000);
    expect(JSON.parse(await bash(line.trim()))).toMatchObject({ status: 'COMPLETED' });
  });

  it('"Five minutes with curl", as written: every answer the README shows', async () => {
    const script = blockAfter('In another terminal:').replaceAll('http://127.0.0.1:8080', berth.url);
    const started = Date.now();
    const out = await bash(`set -e\n${script}`, 90_000);
    console.log(`README curl walkthrough: ${Date.now() - started} ms`);
    expect(out).toContain('"status":"COMPLETED"');
    expect(out).toContain('"output":{"hello":"world"}');
    expect(out).toMatch(/"status":"CANCELLED"/);
    expect(out).toMatch(/data: \{"output":\{"index":0,"text":"chunk 0"\}\}/);
    expect(out).toContain('event: done');
    expect(out).toMatch(/"status":"FAILED".*"error":"bad input"/);
    expect(out).toMatch(/\{"id":"[^"]+","status":"IN_QUEUE"\}/);
    expect(out).toContain('"status":"TIMED_OUT"');
    expect(out).toMatch(/"workers":\{/);
    expect(out).toMatch(/"removed":\d+/);
  }, 100_000);

  it('the playground, its API reference page and the OpenAPI document are served', async () => {
    for (const path of ['/', '/docs']) {
      const res = await fetch(berth.url + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
    }
    expect((await berth.json('/openapi.json')).body).toMatchObject({
      openapi: '3.1.0',
      paths: { '/v2/echo/run': { post: expect.any(Object) } },
    });
  });
});
