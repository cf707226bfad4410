// The playground's Monitor view of a load-balancing endpoint (issue #39): Chromium through playwright-core against a
// real `berth dev` running a Node HTTP worker (tests/e2e/fixtures/lb/node-worker.mjs) as a "type": "http" endpoint
// with one GPU per worker on a box of one (no GPU needed: the allocator places device ids). A second worker cannot
// start while the first holds the GPU: the page says so, with the requests in flight and waiting, and afterwards
// the request counts of /metrics. Screenshot: test-artifacts/playground/monitor-lb.png.
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

const figure = (name: string) => page.locator(`[data-figure="${name}"]`).textContent();
const text = (selector: string) => page.locator(selector).textContent();

/** The sum of `berth_lb_requests_total{endpoint="gen",...}` over workers, for statuses matching `status`. */
async function requests(status: RegExp): Promise<number> {
  const metrics = await (await berth.fetch('/metrics')).text();
  let n = 0;
  for (const m of metrics.matchAll(/^berth_lb_requests_total\{endpoint="gen",worker="[^"]+",status="(\d+)"\} (\d+)$/gm))
    if (status.test(m[1]!)) n += Number(m[2]);
  return n;
}

describe.skipIf(!CHROMIUM)(`playground Monitor view of a load-balancing endpoint in Chromium${NO_CHROMIUM}`, () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
    dir = mkdtempSync(join(REPO_ROOT, '.berth', 'monitor-lb-'));
    const config = join(dir, 'berth.config.json');
    const gen = {
      type: 'http',
      command: `node ${WORKER}`,
      maxWorkers: 2,
      concurrency: 1,
      gpusPerWorker: 1,
      idleTimeoutMs: 60_000,
    };
    writeFileSync(config, JSON.stringify({ gpus: { devices: ['0'] }, endpoints: { gen } }));
    ({ berth, browser, page } = await devWithPage({ config }));
  }, 60_000);
  afterAll(() => closeDevPage({ berth, browser }, dir));

  it('shows requests, request time, workers, requests in flight per worker and "waiting for a GPU"', async () => {
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${berth.url}/#key=${encodeURIComponent(berth.apiKey)}`);
    await page.waitForSelector('#target option[value="ep:gen"]', { state: 'attached' });
    await page.locator('section.monitor').scrollIntoViewIfNeeded();
    await page.waitForFunction(
      () => document.querySelector('[data-chart="jobs"] h3')?.textContent === 'Requests per second',
    );
    expect(await page.locator('[data-chart="delay"]').isHidden()).toBe(true);

    // From zero: the first request starts a worker (it takes the one GPU); five more follow on it.
    for (let i = 0; i < 6; i++) expect((await berth.fetch('/v2/gen/lb/generate', { method: 'POST' })).status).toBe(200);
    // One slow request holds the worker (concurrency 1); the next waits, and its worker cannot have a GPU.
    const slow = berth.fetch('/v2/gen/lb/slow?ms=6000');
    await page.waitForFunction(() => document.querySelector('[data-figure="lb.inFlight"]')?.textContent === '1');
    const waiting = berth.fetch('/v2/gen/lb/slow?ms=10');
    await page.waitForFunction(() => document.querySelector('[data-figure="lb.waiting"]')?.textContent === '1', null, {
      timeout: 5_000,
    });
    await page.waitForFunction(() => /a GPU/.test(document.querySelector('#monitor-waiting')?.textContent ?? ''));
    expect(await text('#monitor-waiting')).toMatch(
      /^Requests are waiting for a GPU \(all held by other workers\)\. GPUs: gen-[a-z0-9]+-1: 0$/,
    );
    expect(await figure('lb.ready')).toBe('1');
    const serving = await page
      .locator('[data-figure^="lb.worker."]')
      .evaluateAll((els: any[]) => els.map((e) => [e.dataset.figure, e.textContent]));
    expect(serving).toEqual([[expect.stringMatching(/^lb\.worker\.gen-[a-z0-9]+-1$/), '1']]);
    expect(await figure('queue.waiting')).toBe('1 now');
    await page.locator('section.monitor').screenshot({ path: join(SHOTS, 'monitor-lb.png') });

    // Both answered (the waiting one by the first worker once free); the page counts what /metrics counts.
    expect((await slow).status).toBe(200);
    expect((await waiting).status).toBe(200);
    const answered = await requests(/^[1-4]/);
    expect(answered).toBe(8);
    expect(await requests(/^5/)).toBe(0);
    await page.waitForFunction(
      (n) => document.querySelector('[data-figure="jobs.answered"]')?.textContent?.endsWith(`, ${n} in 15 min`),
      answered,
    );
    expect(await figure('jobs.failed')).toMatch(/, 0 in 15 min$/);
    expect(await figure('cold.cold starts')).toBe('1 in 15 min');
    expect(await figure('exec.p95')).toMatch(/^(\d+(\.\d+)? (ms|s)) over 15 min$/);
    await page.waitForFunction(() => document.querySelector('[data-figure="lb.inFlight"]')?.textContent === '0');
    // Nothing waits now, and no worker is wanted: only the GPU held is said.
    await page.waitForFunction(() => !/waiting/.test(document.querySelector('#monitor-waiting')?.textContent ?? ''));
    expect(await text('#monitor-waiting')).toMatch(/^GPUs: gen-[a-z0-9]+-1: 0$/);
    expect(errors).toEqual([]);
  }, 60_000);
});
