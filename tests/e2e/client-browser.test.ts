// @berth/client bundled for the browser (esbuild, as a page would ship it) and run in headless Chromium against
// `berth dev`: a job submitted and streamed with an API key, and a webhook signature checked with WebCrypto.
import { createHmac, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, NO_CHROMIUM, launchChromium } from './browser.test-helpers.js';
import { startBerthDev, type BerthDev } from './harness.test-helpers.js';

const ENTRY = fileURLToPath(new URL('../../packages/client/dist/index.js', import.meta.url));
let dev: BerthDev;
let browser: Browser;
let bundle: string;

describe.skipIf(!CHROMIUM)(`@berth/client in Chromium${NO_CHROMIUM}`, () => {
  beforeAll(async () => {
    const out = await build({
      entryPoints: [ENTRY],
      bundle: true,
      minify: true,
      format: 'iife',
      globalName: 'BerthClient',
      platform: 'browser',
      target: 'es2022',
      write: false,
    });
    bundle = out.outputFiles[0]!.text;
    [dev, browser] = await Promise.all([
      startBerthDev({ waitForWorkers: ['stream'], readyTimeoutMs: 90_000 }),
      launchChromium(),
    ]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await dev?.[Symbol.asyncDispose]();
  });

  it('streams a job with an API key and checks a webhook signature with WebCrypto', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${dev.url}/ping`);
    await page.addScriptTag({ content: bundle });
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const body = '{"id":"x-u1","status":"COMPLETED"}';
    const ts = Math.floor(Date.now() / 1000);
    const sig = createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
      .update(`m1.${ts}.${body}`)
      .digest('base64');
    const result = await page.evaluate(
      async ({ apiKey, origin, secret, body, headers }) => {
        const { createClient, verifyWebhook } = (globalThis as any).BerthClient;
        const ep = createClient({ baseUrl: `${origin}/v2`, apiKey }).endpoint('stream');
        const { id } = await ep.run({ chunks: 5, delayMs: 50 });
        const chunks: unknown[] = [];
        const stream = ep.stream(id);
        let r = await stream.next();
        for (; !r.done; r = await stream.next()) chunks.push(r.value);
        const hook = await verifyWebhook(secret, headers, body);
        const forged = await verifyWebhook(secret, headers, body.replace('x-u1', 'y-u1')).catch((e: Error) => e.name);
        return { chunks, final: r.value, hook, forged };
      },
      {
        apiKey: dev.apiKey,
        origin: dev.url,
        secret,
        body,
        headers: { 'webhook-id': 'm1', 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${sig}` },
      },
    );
    expect(result.chunks).toEqual(Array.from({ length: 5 }, (_, i) => ({ index: i, text: `chunk ${i}` })));
    expect(result.final).toMatchObject({ status: 'COMPLETED' });
    expect(result.hook).toEqual(JSON.parse(body));
    expect(result.forged).toBe('WebhookVerificationError');
    expect(errors).toEqual([]);
    await page.close();
  });
});
