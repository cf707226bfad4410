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
  page
    .waitForFunction((w) => document.getElementById('job-status')?.textContent === w, want, { timeout })
    .catch(async (err) => {
      throw new Error(
        `status never became ${want} (is ${await page.locator('#job-status').textContent()}; error: ${await page.locator('#run-error').textContent()})\n${(err as Error).message}\n${berth.tail(20)}`,
      );
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
const jobsOf = async (endpoint: string) =>
  (await berth.json<{ jobs: { id: string; status: string }[] }>(`/v2/${endpoint}/jobs?limit=50`)).body.jobs;

describe.skipIf(!CHROMIUM)(`playground session in Chromium${NO_CHROMIUM}`, () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'berth-playground-session-'));
    const config = join(dir, 'berth.config.json');
    writeFileSync(join(dir, 'broken.ts'), "throw new Error('cannot load the model: BERTH_MODELS_DIR is not set');\n");
    writeFileSync(
      config,
      JSON.stringify({
        endpoints: {
          sleep: { worker: basic('sleep.ts'), workers: 1, concurrency: 4 },
          greet: { worker: basic('greet.ts'), workers: 1, concurrency: 4 },
          fail: { worker: basic('fail.ts'), workers: 1 },
          nobody: { worker: basic('echo.ts'), workers: 0 }, // no worker ever connects: jobs wait IN_QUEUE
          greet0: { worker: basic('greet.ts'), minWorkers: 0, maxWorkers: 1 }, // scales from zero: no schema until a job
          broken: { worker: join(dir, 'broken.ts'), minWorkers: 0, maxWorkers: 1 }, // throws while loading, on the first job
        },
      }),
    );
    [berth, browser] = await Promise.all([
      startBerthDev({ config, waitForWorkers: ['sleep', 'greet', 'fail'] }),
      launchChromium(),
    ]);
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('request', (r) => {
      if (r.method() === 'POST' && /\/v2\/[^/]+\/(run|runsync)$/.test(new URL(r.url()).pathname))
        posts.push(new URL(r.url()).pathname);
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
    // The page showed "enter the API key" before any key: wait for this key's answer, not for any error.
    await page.waitForFunction(() => document.getElementById('key-status')?.textContent !== 'Checking the key…');
    expect(await page.locator('#key-status').textContent()).toBe('Key refused (401): paste another one.');
    expect(await page.locator('#page-error').textContent()).toMatch(/401/);
    for (let i = 0; i < 3; i++) await useKey(berth.apiKey);
    await page.waitForSelector('#target option[value="ep:sleep"]', { state: 'attached' });
    expect(await page.locator('#key-status').textContent()).toBe('Key accepted for this tab.');

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

  it('a running job: progress bar from `percent`, a running timer, the jobs list and health refreshed at once', async () => {
    await pickJson('ep:sleep', { ms: 4000 });
    await page.getByRole('button', { name: 'Run (/run)' }).click();
    await waitForStatus('IN_PROGRESS');
    const id = await page.locator('#job-id').textContent();
    // The jobs view and health follow the job's state changes, not only the 4 s refresh.
    await page.waitForFunction(
      (jobId) =>
        /IN_PROGRESS/.test(
          document.querySelector(`#jobs button[data-job-id="${jobId}"]`)?.closest('tr')?.textContent ?? '',
        ),
      id,
      { timeout: 1500 },
    );
    await page.waitForFunction(() => /running 1/.test(document.getElementById('health')?.textContent ?? ''), null, {
      timeout: 1500,
    });
    const bar = await page.waitForFunction(() => {
      const p = document.getElementById('job-progress-bar');
      return p && !p.hidden && p.value > 0 && p.value < 100 ? p.value : false;
    });
    expect(await bar.jsonValue()).toBeGreaterThan(0);
    expect(await page.locator('#job-progress').textContent()).toMatch(/^\d+%$/);
    const t1 = Number.parseFloat((await page.locator('#job-elapsed').textContent()) ?? '');
    await page.waitForTimeout(400);
    const t2 = Number.parseFloat((await page.locator('#job-elapsed').textContent()) ?? '');
    expect(t2).toBeGreaterThan(t1);
    await page.screenshot({ path: join(SHOTS, 'session-progress.png'), fullPage: true });
    await waitForStatus('COMPLETED');
    const stopped = await page.locator('#job-elapsed').textContent();
    await page.waitForTimeout(300);
    expect(await page.locator('#job-elapsed').textContent()).toBe(stopped);
    expect(Number.parseFloat(stopped ?? '')).toBeGreaterThanOrEqual(4);
  }, 30_000);

  it('IN_QUEUE says what the job waits for (no worker connected)', async () => {
    await pickJson('ep:nobody', { hello: 'world' });
    await page.getByRole('button', { name: 'Run (/run)' }).click();
    await waitForStatus('IN_QUEUE');
    await page.waitForFunction(() =>
      /Waiting for a worker: none is connected yet/.test(document.getElementById('job-wait')?.textContent ?? ''),
    );
    expect(await page.locator('#job-wait').isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'session-queued.png'), fullPage: true });
    await page.getByRole('button', { name: 'Cancel' }).click();
    await waitForStatus('CANCELLED');
    expect(await page.locator('#job-wait').isVisible()).toBe(false);
  });

  it('scale from zero with a handler that fails to load: the queued job says so (health: unhealthy)', async () => {
    await pickJson('ep:broken', { a: 1 });
    await page.getByRole('button', { name: 'Run (/run)' }).click();
    await waitForStatus('IN_QUEUE');
    await page.waitForFunction(
      () =>
        /^No worker can take it: the handler failed to load/.test(
          document.getElementById('job-wait')?.textContent ?? '',
        ),
      null,
      { timeout: 20_000 },
    );
    expect((await berth.json('/v2/broken/health')).body.workers).toMatchObject({
      unhealthy: 1,
      idle: 0,
      initializing: 0,
    });
    expect(berth.output).toMatch(/endpoint broken: handler .*broken\.ts failed to load/);
    await page.screenshot({ path: join(SHOTS, 'session-broken-handler.png'), fullPage: true });
    await page.getByRole('button', { name: 'Cancel' }).click();
    await waitForStatus('CANCELLED');
  }, 40_000);

  it('the form does not send what its schema refuses; a job failed with invalid_input offers no Retry', async () => {
    posts.length = 0;
    await page.selectOption('#target', 'ep:greet');
    const toForm = page.getByRole('button', { name: 'Back to form' });
    if (await toForm.isVisible()) await toForm.click();
    const name = page.getByRole('textbox', { name: 'name *', exact: true });
    const times = page.getByRole('spinbutton', { name: 'times' });
    await name.fill('');
    await times.fill('11');
    await page.getByRole('button', { name: 'Run (/run)' }).click();
    await page.waitForSelector('#run-error:not([hidden])');
    expect(await page.locator('#run-error').textContent()).toBe(
      'Not sent: the input does not match the schema: name: is required; times: must be at most 10',
    );
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field-problem:not([hidden])').allTextContents()).toEqual([
      'name is required',
      'times must be at most 10',
    ]);
    await page.getByRole('button', { name: 'Run sync (/runsync)' }).click();
    await page.screenshot({ path: join(SHOTS, 'session-invalid.png'), fullPage: true });
    await name.fill('Ada');
    await times.fill('2');
    expect(await name.getAttribute('aria-invalid')).toBeNull();
    await page.waitForTimeout(300);
    expect(posts, 'nothing sent while the input was invalid').toEqual([]);

    // A job the worker refused for its input (sent by another client), opened from the jobs list: no Retry.
    const { body } = await berth.json<{ id: string }>('/v2/greet/run', {
      method: 'POST',
      body: JSON.stringify({ input: { name: '' } }),
    });
    await expect.poll(async () => (await berth.json(`/v2/greet/status/${body.id}`)).body.status).toBe('FAILED');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.locator(`#jobs button[data-job-id="${body.id}"]`).click();
    await page.getByRole('button', { name: 'Open in Result' }).click();
    await waitForStatus('FAILED');
    expect(await page.locator('#run-error').textContent()).toMatch(/invalid_input/);
    await expect(page.getByRole('button', { name: 'Retry' }).isDisabled()).resolves.toBe(true);
    expect(pageErrors).toEqual([]);
  }, 30_000);

  it('scale from zero: JSON until a worker connects, then the form from its schema, keeping the input', async () => {
    await page.selectOption('#target', 'ep:greet0');
    expect(await page.locator('#target-info').textContent()).toContain('no input schema announced yet');
    await page.getByLabel('Input (JSON)').fill('{"name": "Zoe", "times": 2}');
    await page.getByRole('button', { name: 'Run sync (/runsync)' }).click();
    await waitForStatus('COMPLETED', 30_000);
    const name = page.getByRole('textbox', { name: 'name *', exact: true });
    await name.waitFor({ timeout: 12_000 });
    expect([await name.inputValue(), await page.getByRole('spinbutton', { name: 'times' }).inputValue()]).toEqual([
      'Zoe',
      '2',
    ]);
    expect(await page.locator('#target-info').textContent()).not.toContain('no input schema');
  }, 45_000);

  it('/openapi.json needs the key and carries the schema greet announced; /docs renders it', async () => {
    expect((await berth.json('/openapi.json', { auth: false })).status).toBe(401);
    const { status, body: doc } = await berth.json('/openapi.json');
    expect(status).toBe(200);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.schemas['input.greet']).toMatchObject({
      type: 'object',
      properties: { name: { type: 'string' }, times: { type: 'integer' } },
      required: expect.arrayContaining(['name']),
    });
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v2/greet/run', '/v2/sleep/cancel/{job_id}', '/v2/nobody/health']),
    );

    await page.getByRole('link', { name: 'API reference' }).click(); // same tab: the key stays in sessionStorage
    await page.waitForURL(`${berth.url}/docs`);
    await page.waitForSelector('#doc .op');
    expect(await page.locator('#doc-info').textContent()).toMatch(
      /^Berth queue API .*OpenAPI 3\.1\.0: \d+ routes for this key\.$/,
    );
    const run = page.locator('#doc .op').filter({ hasText: '/v2/greet/run' }).first();
    await run.locator('summary', { hasText: 'Request body' }).click();
    expect(await run.locator('pre').first().textContent()).toContain('"name"');
    await page.screenshot({ path: join(SHOTS, 'api-reference.png') });
    expect(pageErrors).toEqual([]);
  });
});
