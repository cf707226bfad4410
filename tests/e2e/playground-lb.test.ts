// The playground's request panel for a load-balancing endpoint (issue #39): Chromium through playwright-core against
// a real `berth dev` running the Node HTTP worker tests/e2e/fixtures/lb/node-worker.mjs as a "type": "http"
// endpoint, next to a queue endpoint. The page sends POST /generate through /v2/gen/lb/ and shows the answer and the
// worker; reads /sse chunk by chunk; shows a strict affinity to an unknown worker as 404 affinity_worker_gone; and
// keeps the queue endpoint's Run form and Jobs panel. Screenshot: test-artifacts/playground/lb-try.png.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, closeDevPage, devWithPage, NO_CHROMIUM } from './browser.test-helpers.js';
import { REPO_ROOT, type BerthDev } from './harness.test-helpers.js';

declare const document: any;

const SHOTS = join(REPO_ROOT, 'test-artifacts/playground');
const WORKER = join(REPO_ROOT, 'tests/e2e/fixtures/lb/node-worker.mjs');

let berth: BerthDev;
let browser: Browser;
let page: Page;
let dir: string;

const text = (id: string) => page.locator(`#${id}`).textContent();
const visible = (id: string) => page.locator(`#${id}`).isVisible();

describe.skipIf(!CHROMIUM)(`playground request panel of a load-balancing endpoint in Chromium${NO_CHROMIUM}`, () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
    dir = mkdtempSync(join(REPO_ROOT, '.berth', 'playground-lb-'));
    writeFileSync(
      join(dir, 'echo.ts'),
      `import { start } from '@berth/worker';\nstart({ handler: async (job) => job.input });\n`,
    );
    const config = join(dir, 'berth.config.json');
    const gen = { type: 'http', command: `node ${WORKER}`, maxWorkers: 1, idleTimeoutMs: 60_000 };
    writeFileSync(config, JSON.stringify({ endpoints: { echo: { worker: './echo.ts' }, gen } }));
    ({ berth, browser, page } = await devWithPage({ config }));
  }, 60_000);
  afterAll(() => closeDevPage({ berth, browser }, dir));

  it('sends POST /generate and shows the worker; reads /sse chunk by chunk; shows affinity_worker_gone', async () => {
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${berth.url}/#key=${encodeURIComponent(berth.apiKey)}`);
    await page.waitForSelector('#target option[value="ep:gen"]', { state: 'attached' });

    // The queue endpoint keeps its Run form and code; the HTTP endpoint gets the request form instead.
    await page.selectOption('#target', 'ep:echo');
    expect([await visible('input-form'), await visible('code'), await visible('lb-form')]).toEqual([true, true, false]);
    expect(await visible('jobs-view')).toBe(true);
    await page.selectOption('#target', 'ep:gen');
    expect([await visible('input-form'), await visible('code'), await visible('lb-form')]).toEqual([
      false,
      false,
      true,
    ]);
    await page.locator('#monitor-lb').waitFor(); // the Monitor view stays, with its "Now:" line
    expect([await visible('job-meta'), await visible('jobs-view')]).toEqual([false, false]);
    expect(await text('lb-prefix')).toBe('/v2/gen/lb');
    expect(await text('target-info')).toMatch(/^HTTP endpoint \(load balancing\)/);

    // POST /generate from zero: the first request starts the worker and goes through once its /ping says 200.
    expect(await page.inputValue('#lb-path')).toBe('/generate');
    await page.fill('#lb-body', '{"prompt": "hi"}');
    await page.click('#lb-send');
    await page.waitForFunction(() => /done in/.test(document.querySelector('#lb-got')?.textContent ?? ''), null, {
      timeout: 20_000,
    });
    expect(await text('lb-status')).toBe('200 OK');
    const worker = (await text('lb-worker')) ?? '';
    expect(worker).toMatch(/^gen-[a-z0-9]+-1$/);
    expect(await text('lb-type')).toBe('application/json');
    expect(JSON.parse((await text('lb-out')) ?? '')).toEqual({ path: '/generate' });
    expect(await visible('lb-error')).toBe(false);

    // GET /sse: three events 200 ms apart, shown as they arrive (the first before the last is sent).
    await page.selectOption('#lb-method', 'GET');
    await page.fill('#lb-path', '/sse');
    await page.click('#lb-send');
    await page.waitForFunction(() => /"n":0/.test(document.querySelector('#lb-out')?.textContent ?? ''));
    expect(await text('lb-out')).not.toContain('"n":2');
    expect(await text('lb-got')).toMatch(/^chunks: [12] · \d+ chars · at \d+ ms$/);
    await page.waitForFunction(() => /done in/.test(document.querySelector('#lb-got')?.textContent ?? ''));
    expect(await text('lb-out')).toBe('data: {"n":0}\n\ndata: {"n":1}\n\ndata: {"n":2}\n\n');
    expect(await text('lb-got')).toMatch(/^chunks: [3-9] · 45 chars · done in \d+ ms$/);
    expect(await text('lb-type')).toBe('text/event-stream');
    expect(await text('lb-worker')).toBe(worker);
    await page.screenshot({ path: join(SHOTS, 'lb-try.png'), clip: { x: 0, y: 0, width: 1280, height: 740 } });

    // A soft pin to the worker goes to it; a strict pin to a worker that does not exist is the proxy's 404.
    await page.selectOption('#lb-method', 'POST');
    await page.fill('#lb-path', '/generate?x=1');
    await page.fill('#lb-affinity', worker);
    await page.click('#lb-send');
    await page.waitForFunction(() => /done in/.test(document.querySelector('#lb-got')?.textContent ?? ''));
    expect(JSON.parse((await text('lb-out')) ?? '')).toEqual({ path: '/generate?x=1' });
    expect(await text('lb-worker')).toBe(worker);
    await page.fill('#lb-affinity', 'strict gen-nobody-9');
    await page.click('#lb-send');
    await page.waitForFunction(() => /done in/.test(document.querySelector('#lb-got')?.textContent ?? ''));
    expect(await text('lb-status')).toBe('404 Not Found');
    expect(await text('lb-worker')).toBe('none');
    expect(await text('lb-error')).toMatch(/^404 affinity_worker_gone: /);
    expect(await visible('lb-error')).toBe(true);
    expect(errors).toEqual([]);
  }, 60_000);
});
