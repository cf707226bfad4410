// The playground's batches view (issue #38): Chromium through playwright-core against a real `berth dev` whose
// endpoint has a batch lane. A batch made through the API shows up with its state and its requests by state, and
// the counts follow the batch as it runs (the view refreshes with the jobs view). Screenshot:
// test-artifacts/playground/batches.png.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, closeDevPage, devWithPage, NO_CHROMIUM } from './browser.test-helpers.js';
import { REPO_ROOT, type BerthDev } from './harness.test-helpers.js';

declare const document: any;

const SHOTS = join(REPO_ROOT, 'test-artifacts/playground');

let berth: BerthDev;
let browser: Browser;
let page: Page;
let dir: string;

/** The count cells of a batch's row, by field. */
const counts = (id: string) =>
  page.evaluate((batchId) => {
    const row = document.querySelector(`#batches tr[data-batch-id="${batchId}"]`);
    if (!row) return undefined;
    const out: Record<string, string> = {};
    for (const td of row.querySelectorAll('td[data-count]')) out[td.dataset.count] = td.textContent;
    out.state = row.querySelector('.badge')?.textContent;
    return out;
  }, id);

describe.skipIf(!CHROMIUM)(`playground batches view in Chromium${NO_CHROMIUM}`, () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
    dir = mkdtempSync(join(REPO_ROOT, '.berth', 'pg-batches-'));
    writeFileSync(
      join(dir, 'nap.ts'),
      `import { setTimeout as sleep } from 'node:timers/promises';
import { start } from '@berth/worker';
start({ handler: async (job) => {
  await sleep(Number(job.input.ms ?? 0), undefined, { signal: job.signal });
  if (job.input.fail) throw new Error('asked to fail');
  return { ok: true };
} });
`,
    );
    const config = join(dir, 'berth.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        endpoints: { nap: { worker: './nap.ts', maxWorkers: 1, idleTimeoutMs: 2000, batch: { maxWorkers: 1 } } },
      }),
    );
    ({ berth, browser, page } = await devWithPage({ config }));
  }, 60_000);
  afterAll(() => closeDevPage({ berth, browser }, dir));

  it('lists the endpoint batches with their state and counts, and follows a batch as it runs', async () => {
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    // A DRAFT batch of 3 (nothing runs) and a batch of 5 (one fails) that is finalized once the page shows it.
    const draft = await berth.post('/v2/nap/batch', {
      name: 'draft-one',
      requests: [{ input: {} }, { input: {} }, { input: {} }],
    });
    expect(draft.status).toBe(200);
    const run = await berth.post('/v2/nap/batch', [
      ...Array.from({ length: 4 }, () => ({ input: { ms: 300 } })),
      { input: { fail: true } },
    ]);
    expect(run.status).toBe(200);

    await page.goto(`${berth.url}/#key=${encodeURIComponent(berth.apiKey)}`);
    await page.waitForSelector('#target option[value="ep:nap"]', { state: 'attached' });
    await page.selectOption('#target', 'ep:nap');
    await page.waitForSelector(`#batches tr[data-batch-id="${run.body.id}"]`);
    expect(await page.locator('#batches-view').isVisible()).toBe(true);
    expect(await counts(draft.body.id)).toMatchObject({
      state: 'DRAFT',
      requestTotal: '3',
      requestQueued: '3',
      requestCompleted: '0',
    });
    expect(await counts(run.body.id)).toMatchObject({ state: 'DRAFT', requestTotal: '5', requestQueued: '5' });
    expect(await page.locator('#batches').textContent()).toContain('draft-one');

    expect((await berth.post(`/v2/nap/batch/${run.body.id}/finalize`)).status).toBe(200);
    // The lane worker starts from zero and runs them; the view's counts follow after a Refresh each time.
    const deadline = Date.now() + 30_000;
    let seen: Record<string, string> | undefined;
    while (Date.now() < deadline) {
      await page.click('#refresh-jobs');
      await page.waitForTimeout(300);
      seen = await counts(run.body.id);
      if (seen?.requestCompleted === '4' && seen.requestFailed === '1') break;
    }
    expect(seen).toMatchObject({
      state: 'FINALIZED',
      requestTotal: '5',
      requestQueued: '0',
      requestInProgress: '0',
      requestCompleted: '4',
      requestFailed: '1',
      requestCancelled: '0',
    });
    const row = page.locator(`#batches tr[data-batch-id="${run.body.id}"]`);
    expect(await row.textContent()).toContain('100% · done');
    // The summary the API gives has the same counts.
    const api = await berth.json(`/v2/nap/batch/${run.body.id}`);
    expect(api.body).toMatchObject({ requestCompleted: 4, requestFailed: 1, done: true });
    await page.locator('#batches-view').screenshot({ path: join(SHOTS, 'batches.png') });
    expect(errors).toEqual([]);
  }, 90_000);
});
