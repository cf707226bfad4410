// @berth/client bundled for the browser (esbuild, as a page would ship it) and run in headless Chromium against
// `berth dev`: a job submitted and streamed with an API key, and a webhook signature checked with WebCrypto; a job
// streamed with only its job token, which is refused on another job and once it has expired.
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

  it('streams a job with only its job token; the token is refused on another job and after it expired', async () => {
    const submit = async (body: object) => {
      const res = await fetch(`${dev.url}/v2/stream/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${dev.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { id: string; token?: string };
    };
    const mine = await submit({ input: { chunks: 3, delayMs: 50 }, token: { ttlSeconds: 10 } });
    const other = await submit({ input: { chunks: 1, delayMs: 0 } });
    expect(mine.token).toMatch(/^berth_jt_/);
    const issuedAt = Date.now();
    const page = await browser.newPage();
    await page.goto(`${dev.url}/ping`);
    await page.addScriptTag({ content: bundle });
    const run = (phase: 'live' | 'expired') =>
      page.evaluate(
        async ({ origin, token, id, otherId, phase }) => {
          const { createClient } = (globalThis as any).BerthClient;
          const ep = createClient({ baseUrl: `${origin}/v2`, token }).endpoint('stream');
          const code = (p: Promise<unknown>) =>
            p.then(
              () => 'ok',
              (e: { code?: string }) => e.code ?? String(e),
            );
          if (phase === 'expired') return { status: await code(ep.status(id)) };
          const chunks: unknown[] = [];
          const stream = ep.stream(id);
          for (let r = await stream.next(); !r.done; r = await stream.next()) chunks.push(r.value);
          return { chunks, status: (await ep.status(id)).status, other: await code(ep.status(otherId)) };
        },
        { origin: dev.url, token: mine.token!, id: mine.id, otherId: other.id, phase },
      );
    const live = await run('live');
    expect(live).toEqual({
      chunks: Array.from({ length: 3 }, (_, i) => ({ index: i, text: `chunk ${i}` })),
      status: 'COMPLETED',
      other: 'job_token_not_allowed',
    });
    await new Promise((r) => setTimeout(r, Math.max(0, issuedAt + 11_000 - Date.now())));
    expect(await run('expired')).toEqual({ status: 'job_token_expired' });
    await page.close();
  }, 60_000);
});
