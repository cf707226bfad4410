// Why a queued job waits, in the playground (issues #38 and #39): Chromium through playwright-core against a real
// `berth dev` whose one GPU is held by another endpoint's worker. The job view shows the queued job's place and
// reason, the Jobs panel's health line and the Monitor view say "waiting for a GPU", and the GPU's holder is named.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, closeDevPage, devWithPage, NO_CHROMIUM } from './browser.test-helpers.js';
import { REPO_ROOT, type BerthDev } from './harness.test-helpers.js';

const SHOTS = join(REPO_ROOT, 'test-artifacts/playground');

let berth: BerthDev;
let browser: Browser;
let page: Page;
let dir: string;

describe.skipIf(!CHROMIUM)(`playground: why a queued job waits, in Chromium${NO_CHROMIUM}`, () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
    dir = mkdtempSync(join(REPO_ROOT, '.berth', 'waiting-'));
    writeFileSync(
      join(dir, 'gpu.ts'),
      `import { start } from '@berth/worker';
start({ handler: async () => ({ cuda: process.env.CUDA_VISIBLE_DEVICES }) });
`,
    );
    const config = join(dir, 'berth.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        gpus: { devices: ['0'] },
        endpoints: {
          hog: { worker: './gpu.ts', workers: 1, gpusPerWorker: 1 },
          wait: { worker: './gpu.ts', maxWorkers: 1, gpusPerWorker: 1 },
        },
      }),
    );
    ({ berth, browser, page } = await devWithPage({ config, waitForWorkers: ['hog'] }));
  }, 60_000);
  afterAll(() => closeDevPage({ berth, browser }, dir));

  it('the job view gives a queued job its place and "waiting for a GPU"; health and Monitor say so and name the holder', async () => {
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    const first = (await berth.post('/v2/wait/run', { input: {} })).body.id as string;
    const second = (await berth.post('/v2/wait/run', { input: {} })).body.id as string;
    await page.goto(`${berth.url}/#key=${encodeURIComponent(berth.apiKey)}`);
    await page.waitForSelector('#target option[value="ep:wait"]', { state: 'attached' });
    await page.selectOption('#target', 'ep:wait');

    await page.locator(`#jobs button[data-job-id="${second}"]`).click();
    await expect
      .poll(() => page.locator('#job-detail .queued').textContent())
      .toBe('Queued · 1 job ahead · waiting for a GPU (all held by other workers)');
    await page.locator(`#jobs button[data-job-id="${first}"]`).click();
    await expect
      .poll(() => page.locator('#job-detail .queued').textContent())
      .toBe('Queued · next in line · waiting for a GPU (all held by other workers)');
    await expect
      .poll(() => page.locator('#health').textContent())
      .toContain('Queued jobs: waiting for a GPU (all held by other workers)');
    await expect
      .poll(() => page.locator('#monitor-waiting').textContent(), { timeout: 10_000 })
      .toBe('Queued jobs are waiting for a GPU (all held by other workers)');
    await page.locator('section.jobs').screenshot({ path: join(SHOTS, 'jobs-waiting-gpu.png') });
    // A job run from the page: the Result panel says what it waits for while it is queued.
    await page.getByRole('button', { name: 'Run (/run)' }).click();
    await expect
      .poll(() => page.locator('#job-wait').textContent())
      .toBe('Queued: waiting for a GPU (all held by other workers).');
    await page.getByRole('button', { name: 'Cancel' }).click();

    // The endpoint holding the GPU: its worker and device in the health line and the Monitor view.
    await page.selectOption('#target', 'ep:hog');
    await expect.poll(() => page.locator('#health').textContent()).toContain('GPUs: hog-1: 0');
    await expect.poll(() => page.locator('#monitor-waiting').textContent(), { timeout: 10_000 }).toBe('GPUs: hog-1: 0');
    // A job that ran shows no queue line.
    const done = (await berth.post('/v2/hog/runsync', { input: {} })).body;
    expect(done).toMatchObject({ status: 'COMPLETED', output: { cuda: '0' } });
    await page.locator('#refresh-jobs').click();
    await page.locator(`#jobs button[data-job-id="${done.id}"]`).click();
    await expect.poll(() => page.locator('#job-detail h3').first().textContent()).toBe(`Job ${done.id}`);
    expect(await page.locator('#job-detail .queued').count()).toBe(0);
    expect(errors).toEqual([]);
  }, 60_000);
});
