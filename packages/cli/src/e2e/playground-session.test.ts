// The playground as a new user meets it (issue #19): a key pasted (and changed) several times, then Run and
// Cancel: one POST /run per click, one job, and Cancel leaves nothing running. Chromium through playwright-core
// against a real `berth dev` on examples/basic's handlers (no models: fast). Screenshots: test-artifacts/playground/.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium, NO_CHROMIUM } from './browser.test-helpers.js';
import { REPO_ROOT, startBerthDev, type BerthDev } from './harness.test-helpers.js';

declare const document: any;

const SHOTS = join(REPO_ROOT, 'test-artifacts/playground');
const basic = (file: string) => join(REPO_ROOT, 'examples/basic', file);

let berth: BerthDev;
let browser: Browser;
let page: Page;
let dir: string;
/** Every POST the page made to a /run or /runsync route, in order. */
const posts: string[] = [];
const pageErrors: string[] = [];

const waitForStatus = (want: string, timeout = 20_000) =>
  page.waitForFunction((w) => document.getElementById('job-status')?.textContent === w, want, { timeout }).catch(async (err) => {
    throw new Error(`status never became ${want} (is ${await page.locator('#job-status').textContent()}; error: ${await page.locator('#run-error').textContent()})\n${(err as Error).message}\n${berth.tail(20)}`);
  });
async function useKey(key: string) {
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Use key' }).click();
}
async function pickJson(target: string, json: unknown) {
  await page.selectOption('#target', target);
  const toggle = page.getByRole('button', { name: 'Edit JSON' });
  if (await toggle.isVisible()) await toggle.click();
  await page.getByLabel('Input (JSON)').fill(JSON.stringify(json));
}
const jobsOf = async (endpoint: string) => (await berth.json<{ jobs: { id: string; status: string }[] }>(`/v2/${endpoint}/jobs?limit=50`)).body.jobs;

describe.skipIf(!CHROMIUM)(`playground session in Chromium${NO_CHROMIUM}`, () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'berth-playground-session-'));
    const config = join(dir, 'berth.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        endpoints: {
          sleep: { worker: basic('sleep.ts'), workers: 1, concurrency: 4 },
          greet: { worker: basic('greet.ts'), workers: 1, concurrency: 4 },
          fail: { worker: basic('fail.ts'), workers: 1 },
        },
      }),
    );
    [berth, browser] = await Promise.all([startBerthDev({ config, waitForWorkers: ['sleep', 'greet', 'fail'] }), launchChromium()]);
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('request', (r) => {
      if (r.method() === 'POST' && /\/v2\/[^/]+\/(run|runsync)$/.test(new URL(r.url()).pathname)) posts.push(new URL(r.url()).pathname);
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await berth?.[Symbol.asyncDispose]();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('after several "Use key" clicks, one Run click is one POST /run and one job; Cancel leaves nothing running', async () => {
    await page.goto(`${berth.url}/`);
    await useKey('not-the-key');
    await page.waitForSelector('#page-error:not([hidden])');
    for (let i = 0; i < 3; i++) await useKey(berth.apiKey);
    await page.waitForSelector('#target option[value="ep:sleep"]', { state: 'attached' });

    await pickJson('ep:sleep', { ms: 30_000 });
    await page.getByRole('button', { name: 'Run (/run)' }).click();
    await waitForStatus('IN_PROGRESS');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await waitForStatus('CANCELLED');
    await page.waitForTimeout(500); // a duplicate listener's request would have been sent by now
    expect(posts).toEqual(['/v2/sleep/run']);
    const jobs = await jobsOf('sleep');
    expect(jobs.map((j) => j.status)).toEqual(['CANCELLED']);
    expect((await berth.json('/v2/sleep/health')).body.jobs).toMatchObject({ inQueue: 0, inProgress: 0 });

    posts.length = 0;
    await pickJson('ep:greet', { name: 'Ada' });
    await page.getByRole('button', { name: 'Run sync (/runsync)' }).click();
    await waitForStatus('COMPLETED');
    await page.waitForTimeout(300);
    expect(posts).toEqual(['/v2/greet/runsync']);
    expect(await jobsOf('greet')).toHaveLength(1);
    await page.screenshot({ path: join(SHOTS, 'session-run-once.png'), fullPage: true });
    expect(pageErrors).toEqual([]);
  }, 40_000);
});
