// The playground page end to end: Debian's Chromium driven by playwright-core against a real `berth dev` serving
// the text worker (stories260K), the image worker (tiny-sd, public model shapes-diffusion) and examples/basic's
// sleep and fail handlers. Screenshots go to test-artifacts/playground/.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium, NO_CHROMIUM, which } from './browser.test-helpers.js';
import { REPO_ROOT, startBerthDev, type BerthDev } from './harness.test-helpers.js';

// Browser globals, for the callbacks of page.evaluate/waitForFunction (they run in Chromium). Declared here so the
// test type-checks without the DOM lib, which the rest of the repository does not load.
declare const document: any, window: any, sessionStorage: any, navigator: any, MutationObserver: any;

const CURL = which('curl');
const MODELS_DIR = process.env['BERTH_MODELS_DIR'] ?? resolve(REPO_ROOT, '../shared/models');
const SHOTS = join(REPO_ROOT, 'test-artifacts/playground');

/** One berth.config.json with the endpoints the page is tried on. */
function writeConfig(dir: string): string {
  const image = JSON.parse(readFileSync(join(REPO_ROOT, 'examples/image-worker/berth.config.json'), 'utf8'));
  const audio = JSON.parse(readFileSync(join(REPO_ROOT, 'examples/audio-worker/berth.config.json'), 'utf8'));
  const config = {
    endpoints: {
      text: { worker: join(REPO_ROOT, 'examples/text-worker/worker.ts'), workers: 1, concurrency: 4 },
      image: { worker: join(REPO_ROOT, 'examples/image-worker/text-to-image.ts'), workers: 1 },
      sleep: { worker: join(REPO_ROOT, 'examples/basic/sleep.ts'), workers: 1, concurrency: 2 },
      fail: { worker: join(REPO_ROOT, 'examples/basic/fail.ts'), workers: 1 },
      greet: { worker: join(REPO_ROOT, 'examples/basic/greet.ts'), workers: 1 },
      video: { worker: join(REPO_ROOT, 'examples/image-worker/text-to-video.ts'), workers: 1 },
      tts: { worker: join(REPO_ROOT, 'examples/audio-worker/tts.ts'), workers: 1 },
    },
    models: {
      'shapes-diffusion': image.models['shapes-diffusion'],
      'tiny-sd-video': image.models['tiny-sd-video'],
      'espeak-tts': audio.models['espeak-tts'],
    },
  };
  const file = join(dir, 'berth.config.json');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

let berth: BerthDev;
let browser: Browser;
let page: Page;
let dir: string;
const ids: Record<string, string> = {};
const pageErrors: string[] = [];

const statusText = () => page.locator('#job-status');
const waitForStatus = (want: string, timeout = 30_000) =>
  page
    .waitForFunction((w) => document.getElementById('job-status')?.textContent === w, want, { timeout })
    .catch(async (err) => {
      throw new Error(
        `status never became ${want} (is ${await statusText().textContent()}; error: ${await page.locator('#run-error').textContent()})\n${(err as Error).message}\n${berth.tail(20)}`,
      );
    });
const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
async function pick(target: string, json?: unknown) {
  await page.selectOption('#target', target);
  if (json === undefined) return;
  const toggle = page.getByRole('button', { name: 'Edit JSON' });
  if (await toggle.isVisible()) await toggle.click();
  await page.getByLabel('Input (JSON)').fill(JSON.stringify(json));
}
const rawJob = async () => JSON.parse((await page.locator('#raw-json').textContent()) ?? '{}');

describe.skipIf(!CHROMIUM)(`playground in Chromium${NO_CHROMIUM}`, () => {
  beforeAll(async () => {
    if (!existsSync(join(MODELS_DIR, 'tiny-sd')))
      throw new Error(`test models not found in ${MODELS_DIR}; set BERTH_MODELS_DIR`);
    mkdirSync(SHOTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'berth-playground-'));
    [berth, browser] = await Promise.all([
      startBerthDev({
        config: writeConfig(dir),
        env: { BERTH_MODELS_DIR: MODELS_DIR },
        waitForWorkers: ['text', 'image', 'sleep', 'fail', 'greet', 'video', 'tts'],
        readyTimeoutMs: 60_000,
      }),
      launchChromium(),
    ]);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: berth.url });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    // Script errors and CSP violations ("Refused to ..."); HTTP errors the page shows itself are not counted.
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) pageErrors.push(m.text());
    });
  }, 80_000);
  afterAll(async () => {
    await browser?.close();
    await berth?.[Symbol.asyncDispose]();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves the page with its CSP; takes the key from #key= and removes it from the address bar', async () => {
    const res = await page.goto(`${berth.url}/#key=${berth.apiKey}`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForSelector('#target option[value="model:shapes-diffusion"]', { state: 'attached' });
    expect(page.url()).toBe(`${berth.url}/`);
    const options = await page
      .locator('#target option')
      .evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value));
    expect(options).toEqual(
      expect.arrayContaining(['ep:text', 'ep:image', 'ep:sleep', 'ep:fail', 'ep:greet', 'model:shapes-diffusion']),
    );
    expect(await page.evaluate(() => sessionStorage.getItem('berth.apiKey'))).toBe(berth.apiKey);
    expect(await page.content()).not.toContain(berth.apiKey);
    await expect(page.getByLabel('API key').getAttribute('type')).resolves.toBe('password');

    // A wrong key: the API's error is shown, with its code.
    const other = await page.context().newPage();
    await other.goto(`${berth.url}/#key=wrong-key`);
    await other.waitForSelector('#page-error:not([hidden])');
    expect(await other.locator('#page-error').textContent()).toMatch(/401 unauthorized/);
    await other.close();
  });

  it('a form from the schema the worker announced (zod): text, number, checkbox; Edit JSON stays in sync', async () => {
    await pick('ep:greet');
    const name = page.getByRole('textbox', { name: 'name *', exact: true });
    const times = page.getByRole('spinbutton', { name: 'times' });
    expect([await times.getAttribute('min'), await times.getAttribute('max'), await times.inputValue()]).toEqual([
      '1',
      '10',
      '1',
    ]);
    await name.fill('Ada');
    await times.fill('2');
    await page.getByRole('checkbox', { name: 'shout' }).check();
    expect(await page.locator('#snippet-runsync').textContent()).toContain(
      `'{"input":{"name":"Ada","times":2,"shout":true}}'`,
    );
    await page.getByRole('button', { name: 'Edit JSON' }).click();
    expect(JSON.parse(await page.getByLabel('Input (JSON)').inputValue())).toEqual({
      name: 'Ada',
      times: 2,
      shout: true,
    });
    await page.getByLabel('Input (JSON)').fill('{"name": "Bob", "times": 3, "shout": false}');
    await page.getByRole('button', { name: 'Back to form' }).click();
    expect([await name.inputValue(), await times.inputValue()]).toEqual(['Bob', '3']);
    await page.getByRole('button', { name: 'Run sync (/runsync)' }).click();
    await waitForStatus('COMPLETED');
    expect((await rawJob()).output).toEqual({ greetings: ['Hello, Bob!', 'Hello, Bob!', 'Hello, Bob!'] });
  });

  it('text job through /run: the streamed text grows chunk by chunk, then the final text', async () => {
    // The text worker announces its input schema: a form, not a blank {} (issue #19).
    await page.selectOption('#target', 'ep:text');
    for (const name of ['prompt', 'max_tokens', 'temperature'])
      await expect(page.locator(`#fields [name="${name}"]`).count(), name).resolves.toBe(1);
    // 400 tokens (greedy, no EOS before 500) take about 0.7 s: long enough that the page's /stream request, sent after
    // /run answers, sees the chunks as they come even on a loaded CI machine (120 tokens took 0.2 s and once arrived
    // as one replayed burst).
    await pick('ep:text', { prompt: 'Once upon a time', max_tokens: 400, temperature: 0, stream: true });
    await page.evaluate(() => {
      const seen: { len: number; at: number }[] = [];
      (window as unknown as { seen: typeof seen }).seen = seen;
      new MutationObserver((records: { addedNodes: { textContent: string | null }[] }[]) => {
        for (const r of records)
          for (const n of r.addedNodes) seen.push({ len: n.textContent?.length ?? 0, at: performance.now() });
      }).observe(document.getElementById('text-output')!, { childList: true });
    });
    await page.getByRole('button', { name: 'Run (/run)' }).click();
    await waitForStatus('COMPLETED');
    const job = await rawJob();
    ids['text'] = job.id;
    const final = (await page.locator('#text-output').textContent()) ?? '';
    expect(final.length).toBeGreaterThan(20);
    expect(final).toBe(job.output.text[0]);
    const seen = await page.evaluate(() => (window as unknown as { seen: { len: number; at: number }[] }).seen);
    const partial = seen.filter((s) => s.len > 0 && s.len < final.length);
    expect(new Set(partial.map((s) => s.len)).size, JSON.stringify(seen)).toBeGreaterThanOrEqual(2);
    expect(
      new Set(partial.map((s) => Math.round(s.at))).size,
      'chunks shown at different moments',
    ).toBeGreaterThanOrEqual(2);
    expect(job).toMatchObject({ status: 'COMPLETED', workerId: expect.any(String), executionTime: expect.any(Number) });
    expect(await page.locator('#job-worker').textContent()).toBe(job.workerId);
    await shot('text-stream');
  }, 40_000);

  it('image job on the public model: form from its schema, cost estimate, /runsync, the image rendered', async () => {
    await pick('model:shapes-diffusion');
    for (const name of [
      'prompt',
      'negative_prompt',
      'width',
      'height',
      'num_inference_steps',
      'guidance',
      'seed',
      'output_format',
    ]) {
      await expect(page.locator(`#fields [name="${name}"]`).count(), name).resolves.toBe(1);
    }
    // An empty required prompt: no estimate request (it would be a 400), the form says what is missing.
    await page.getByRole('textbox', { name: 'prompt *', exact: true }).fill('');
    await page.waitForFunction(
      () =>
        document.getElementById('estimate')?.textContent ===
        'No estimate until the input is valid: prompt: is required',
      null,
      { timeout: 10_000 },
    );
    await page.getByRole('textbox', { name: 'prompt *', exact: true }).fill('a big red circle on a blue background');
    await page.getByRole('spinbutton', { name: 'seed' }).fill('7');
    // A value out of the schema's range: neither the estimate nor the job is sent; both say what is wrong.
    await page.getByRole('spinbutton', { name: 'width' }).fill('4096');
    await page.waitForFunction(
      () =>
        /^No estimate until the input is valid: width: must be at most 128$/.test(
          document.getElementById('estimate')?.textContent ?? '',
        ),
      null,
      { timeout: 10_000 },
    );
    await page.getByRole('button', { name: 'Run sync (/runsync)' }).click();
    await page.waitForFunction(() =>
      /^Not sent: .*width: must be at most 128/.test(document.getElementById('run-error')?.textContent ?? ''),
    );
    await page.getByRole('spinbutton', { name: 'width' }).fill('64');
    await page.getByRole('spinbutton', { name: 'height' }).fill('96');
    // cost = base + perMegapixelStep x (64 x 96 / 1e6) x 20 steps, from examples/image-worker/berth.config.json
    const cost = Math.round((0.0002 + 0.0005 * ((64 * 96) / 1e6) * 20) * 1e6) / 1e6;
    await page.waitForFunction(
      (c) => document.getElementById('estimate')?.textContent === `Estimated cost: ${c}`,
      cost,
      { timeout: 10_000 },
    );
    await page.getByRole('button', { name: 'Run sync (/runsync)' }).click();
    await waitForStatus('COMPLETED', 45_000);
    const job = await rawJob();
    ids['image'] = job.id;
    expect(job.output).toMatchObject({ image_url: expect.stringContaining('/files/'), cost });
    const size = await page.waitForFunction(() => {
      const img = document.querySelector('#media img');
      return img?.complete && img.naturalWidth > 0 ? [img.naturalWidth, img.naturalHeight] : false;
    });
    expect(await size.jsonValue()).toEqual([64, 96]);
    await shot('image');
  }, 60_000);

  it('audio and video public models: an audio player and a video player that load their media', async () => {
    await pick('model:espeak-tts');
    await page.getByRole('textbox', { name: 'text *', exact: true }).fill('Hello from the Berth playground.');
    await page.getByRole('button', { name: 'Run sync (/runsync)' }).click();
    await waitForStatus('COMPLETED');
    const speech = await rawJob();
    expect(speech.output).toMatchObject({
      audio_url: expect.stringContaining('/files/'),
      duration: expect.any(Number),
    });
    const duration = await page.waitForFunction(() => {
      const a = document.querySelector('#media audio');
      return a && a.readyState >= 1 && a.duration > 0 ? a.duration : false;
    });
    expect(Math.abs((await duration.jsonValue()) - speech.output.duration)).toBeLessThan(0.2);

    await pick('model:tiny-sd-video');
    await page.getByRole('textbox', { name: 'prompt *', exact: true }).fill('a big red circle on a blue background');
    await page.getByRole('spinbutton', { name: 'frames' }).fill('4');
    await page.getByRole('spinbutton', { name: 'num_inference_steps' }).fill('4');
    await page.getByRole('combobox', { name: 'output_format' }).selectOption({ label: 'mp4' });
    await page.getByRole('button', { name: 'Run sync (/runsync)' }).click();
    await waitForStatus('COMPLETED', 45_000);
    expect((await rawJob()).output).toMatchObject({ video_url: expect.stringMatching(/\.mp4\?/), frames: 4 });
    const frame = await page.waitForFunction(
      () => {
        const v = document.querySelector('#media video');
        return v && v.readyState >= 1 && v.videoWidth > 0 ? [v.videoWidth, v.videoHeight] : false;
      },
      null,
      { timeout: 10_000 },
    );
    expect(await frame.jsonValue()).toEqual([64, 64]);
    await shot('audio-video');
  }, 70_000);

  it('the copied curl snippet runs as is with a real HTTP client: COMPLETED', async () => {
    await pick('model:shapes-diffusion'); // the input typed earlier is still there (kept per endpoint for the tab)
    expect(await page.getByRole('textbox', { name: 'prompt *', exact: true }).inputValue()).toBe(
      'a big red circle on a blue background',
    );
    await page.getByRole('button', { name: 'curl', exact: true }).click();
    await page.locator('button.copy[data-snippet="runsync"]').click();
    await page.waitForFunction(() => document.getElementById('copy-status')?.textContent?.startsWith('Copied'));
    const snippet = await page.evaluate(() => navigator.clipboard.readText());
    expect(snippet).toBe(await page.locator('#snippet-runsync').textContent());
    expect(snippet).toContain(`${berth.url}/v2/shapes-diffusion/runsync`);
    expect(snippet).toContain('$BERTH_API_KEY');
    expect(snippet).not.toContain(berth.apiKey);
    let out: string;
    if (CURL) {
      out = await new Promise<string>((ok, fail) =>
        execFile(
          'sh',
          ['-c', snippet],
          { env: { ...process.env, BERTH_API_KEY: berth.apiKey }, timeout: 60_000 },
          (err, stdout, stderr) => (err ? fail(new Error(`${err.message}\n${stderr}`)) : ok(stdout)),
        ),
      );
    } else {
      // No curl: replay what the snippet says (URL and -d body) with fetch.
      const url = snippet.match(/'(http[^']+)'/)![1]!;
      const body = snippet.match(/-d '([^']*)'/)![1]!;
      out = await (
        await fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${berth.apiKey}`, 'content-type': 'application/json' },
          body,
        })
      ).text();
    }
    const job = JSON.parse(out);
    expect(job, out).toMatchObject({ status: 'COMPLETED', output: { image_url: expect.any(String) } });
    ids['curl'] = job.id;
  }, 70_000);

  it('cancel a running job: CANCELLED, then Cancel and Retry disabled; retry a FAILED job', async () => {
    await pick('ep:sleep', { ms: 30_000 });
    await expect(page.getByRole('button', { name: 'Cancel' }).isDisabled()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Run (/run)' }).click();
    await waitForStatus('IN_PROGRESS');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await waitForStatus('CANCELLED');
    ids['sleep'] = (await rawJob()).id;
    expect((await berth.json(`/v2/sleep/status/${ids['sleep']}`)).body.status).toBe('CANCELLED');
    await expect(page.getByRole('button', { name: 'Cancel' }).isDisabled()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Retry' }).isDisabled()).resolves.toBe(true);
    await shot('cancelled');

    await pick('ep:fail', { message: 'bad input' });
    await page.getByRole('button', { name: 'Run (/run)' }).click();
    await waitForStatus('FAILED');
    ids['fail'] = (await rawJob()).id;
    expect(await page.locator('#run-error').textContent()).toContain('bad input');
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.waitForFunction(() => document.getElementById('raw-json')?.textContent?.includes('"retries": 1'), null, {
      timeout: 15_000,
    });
    await waitForStatus('FAILED');
  }, 40_000);

  it('jobs view: lists the jobs with status and worker, shows a job and its logs; health', async () => {
    await page.selectOption('#target', 'ep:sleep');
    const button = page.locator(`#jobs button[data-job-id="${ids['sleep']}"]`);
    await button.waitFor();
    expect(
      await page
        .locator('#jobs tr')
        .filter({ has: page.locator(`button[data-job-id="${ids['sleep']}"]`) })
        .textContent(),
    ).toMatch(/CANCELLED.*sleep-/);
    await button.click();
    await page.waitForFunction(
      () => /aborted after/.test(document.querySelector('#job-detail .logs')?.textContent ?? ''),
      null,
      { timeout: 10_000 },
    );
    expect(await page.locator('#job-detail pre').textContent()).toContain('"status": "CANCELLED"');
    expect(await page.locator('#health').textContent()).toMatch(/Workers:.*idle/);
    await page.locator('#job-detail').scrollIntoViewIfNeeded();
    await shot('jobs-logs');

    // A job from the list opened in the result panel: the failed one can be retried from there.
    await page.selectOption('#target', 'ep:fail');
    await page.locator(`#jobs button[data-job-id="${ids['fail']}"]`).click();
    await page.getByRole('button', { name: 'Open in Result' }).click();
    expect(await page.locator('#job-id').textContent()).toBe(ids['fail']);
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.waitForFunction(() => document.getElementById('raw-json')?.textContent?.includes('"retries": 2'), null, {
      timeout: 15_000,
    });
    await waitForStatus('FAILED');

    await page.selectOption('#target', 'model:shapes-diffusion');
    for (const id of [ids['image'], ids['curl']]) await page.locator(`#jobs button[data-job-id="${id}"]`).waitFor();
    await page.selectOption('#target', 'ep:text');
    await page.locator(`#jobs button[data-job-id="${ids['text']}"]`).waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    await shot('narrow');
    expect(pageErrors, 'no script errors or CSP violations').toEqual([]);
  }, 30_000);
});
