// The playground's Monitor view under a short load (issue #29): Chromium through playwright-core against a real
// `berth dev` on examples/basic's sleep handler, scaling from zero (a cold start) to two workers. The numbers the
// page shows must be those of /metrics. Screenshots, light and dark: test-artifacts/playground/monitor-*.png.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, closeDevPage, devWithPage, NO_CHROMIUM } from './browser.test-helpers.js';
import { REPO_ROOT, type BerthDev } from './harness.test-helpers.js';

declare const document: any;

const SHOTS = join(REPO_ROOT, 'test-artifacts/playground');
const LOAD_SECONDS = Number(process.env['BERTH_MONITOR_LOAD_SECONDS'] ?? 24);

let berth: BerthDev;
let browser: Browser;
let page: Page;
let dir: string;

/** One sample of /metrics by name and exact labels (`{endpoint="sleep",state="running"}`). */
async function metric(name: string, labels: string): Promise<number> {
  const text = await (await berth.fetch('/metrics')).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  if (!line) throw new Error(`no ${name}{${labels}} in /metrics`);
  return Number(line.split(' ')[1]);
}

/** The (lower, upper] bounds in ms of the bucket of `berth_job_*_seconds` holding the q-ranked job. */
async function bucketHolding(name: string, q: number): Promise<[number, number]> {
  const text = await (await berth.fetch('/metrics')).text();
  const rows = [...text.matchAll(new RegExp(`^${name}_bucket\\{endpoint="sleep",le="([^"]+)"\\} (\\d+)$`, 'gm'))].map(
    (m) => ({ le: m[1] === '+Inf' ? Infinity : Number(m[1]) * 1000, n: Number(m[2]) }),
  );
  const rank = q * rows.at(-1)!.n;
  const i = rows.findIndex((r) => r.n >= rank && r.n > 0);
  return [i > 0 ? rows[i - 1]!.le : 0, rows[i]!.le];
}

/** `c` clients sending /runsync to the sleep endpoint for `seconds`; every 20th job fails (a negative ms). */
async function load(c: number, seconds: number, ms: () => number) {
  const end = Date.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (Date.now() < end) {
        const bad = ++n % 20 === 0;
        const r = await berth.post('/v2/sleep/runsync', { input: { ms: bad ? -1 : ms() } });
        expect(r.body.status, JSON.stringify(r.body)).toBe(bad ? 'FAILED' : 'COMPLETED');
      }
    }),
  );
}

const figure = (name: string) => page.locator(`[data-figure="${name}"]`).textContent();

describe.skipIf(!CHROMIUM)(`playground Monitor view in Chromium${NO_CHROMIUM}`, () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'berth-monitor-'));
    const config = join(dir, 'berth.config.json');
    const sleep = join(REPO_ROOT, 'examples/basic/sleep.ts');
    writeFileSync(
      config,
      JSON.stringify({
        endpoints: { sleep: { worker: sleep, minWorkers: 0, maxWorkers: 2, concurrency: 4, idleTimeoutMs: 4000 } },
      }),
    );
    ({ berth, browser, page } = await devWithPage({ config }));
  }, 60_000);
  afterAll(() => closeDevPage({ berth, browser }, dir));

  it('charts jobs/s, queue, delay, execution, workers and cold starts live, with the figures of /metrics', async () => {
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${berth.url}/#key=${encodeURIComponent(berth.apiKey)}`);
    await page.waitForSelector('#target option[value="ep:sleep"]', { state: 'attached' });
    await page.locator('section.monitor').scrollIntoViewIfNeeded();
    // From zero workers: the first jobs wait for a cold start; the queue makes `berth dev` scale to two.
    const started = Date.now();
    await Promise.all([
      load(12, LOAD_SECONDS / 2, () => 100 + Math.random() * 400),
      // Live: while the load runs, the page shows jobs completing without a reload.
      page.waitForFunction(
        () => /[1-9]\d* in 15 min/.test(document.querySelector('[data-figure="jobs.completed"]')?.textContent ?? ''),
        null,
        { timeout: 20_000 },
      ),
    ]);
    await load(4, LOAD_SECONDS / 2, () => 20 + Math.random() * 60);
    const loadMs = Date.now() - started;

    // Settled: every job finished. Wait for the page's next refresh to show the counter /metrics has now.
    const completed = await metric('berth_jobs_completed_total', 'endpoint="sleep"');
    const failed = await metric('berth_jobs_failed_total', 'endpoint="sleep"');
    expect(completed).toBeGreaterThan(100);
    expect(failed).toBeGreaterThan(3);
    await page.waitForFunction(
      (n) => document.querySelector('[data-figure="jobs.completed"]')?.textContent?.endsWith(`, ${n} in 15 min`),
      completed,
      { timeout: 10_000 },
    );
    expect(await figure('jobs.failed')).toMatch(new RegExp(`, ${failed} in 15 min$`));
    const cold = await metric('berth_worker_cold_starts_total', 'endpoint="sleep"');
    expect(cold).toBeGreaterThanOrEqual(1);
    expect(await figure('cold.cold starts')).toBe(`${cold} in 15 min`);
    expect(await figure('queue.queued')).toBe(`${await metric('berth_queue_depth', 'endpoint="sleep"')} now`);
    const running = await metric('berth_workers', 'endpoint="sleep",state="running"');
    expect(await figure('workers.running')).toBe(String(running));
    // Percentiles: the page shows the server's estimate, which lies in the /metrics bucket of that rank.
    const m = (await berth.json(`/v2/sleep/monitor?window=900`)).body;
    for (const [chart, name, field, q] of [
      ['delay', 'berth_job_delay_seconds', 'delayP95', 0.95],
      ['exec', 'berth_job_execution_seconds', 'execP50', 0.5],
      ['exec', 'berth_job_execution_seconds', 'execP95', 0.95],
    ] as const) {
      const [lo, hi] = await bucketHolding(name, q);
      expect(m.totals[field], field).toBeGreaterThanOrEqual(lo);
      expect(m.totals[field], field).toBeLessThanOrEqual(hi);
      // A string, not a callback: the test transform would rewrite a callback's import().
      const shown = await page.evaluate(`import('/playground/chart.js').then((c) => c.formatMs(${m.totals[field]}))`);
      expect(await figure(`${chart}.p${q === 0.5 ? '50' : '95'}`)).toBe(`${shown} over 15 min`);
    }
    // The charts are drawn: pixels differ from the panel background.
    const inked = await page.evaluate(() =>
      [...document.querySelectorAll('canvas.chart')].map((c: any) => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
        return n;
      }),
    );
    expect(inked).toHaveLength(6);
    for (const n of inked) expect(n).toBeGreaterThan(500);
    const panel = page.locator('section.monitor');
    await panel.screenshot({ path: join(SHOTS, 'monitor-light-15min.png') });
    await page.getByRole('button', { name: '5 min', exact: true }).click();
    await page.waitForFunction(() =>
      /in 5 min$/.test(document.querySelector('[data-figure="jobs.completed"]')?.textContent ?? ''),
    );
    expect(await figure('jobs.completed')).toMatch(new RegExp(`, ${completed} in 5 min$`));
    await panel.screenshot({ path: join(SHOTS, 'monitor-light.png') });
    await page.emulateMedia({ colorScheme: 'dark' }); // the charts redraw at once with the dark palette
    await panel.screenshot({ path: join(SHOTS, 'monitor-dark.png') });
    await page.getByRole('button', { name: '1 hour' }).click();
    await page.waitForFunction(() =>
      /in 1 h$/.test(document.querySelector('[data-figure="jobs.completed"]')?.textContent ?? ''),
    );
    expect(errors).toEqual([]);
    console.log(`monitor e2e: ${completed} completed, ${failed} failed, ${cold} cold start(s) in ${loadMs} ms of load`);
  }, 90_000);
});
