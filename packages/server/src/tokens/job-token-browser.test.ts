// A web page on another origin holds only a job token: it streams its job over EventSource (`?token=`) and reads
// /status with `Authorization: Bearer` (a CORS preflight), and is refused on another job and once the token
// expired (the server's clock is a manual one). Debian's Chromium, driven by playwright-core.
import { execFileSync } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { API_KEY, ScriptedWorker, listening } from '../testing.test-helpers.js';

// Browser globals for the callbacks of page.evaluate (they run in Chromium; the repository loads no DOM lib).
declare const EventSource: any, window: any;

const which = (name: string) => {
  try {
    return execFileSync('which', [name], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
};
const CHROMIUM = which('chromium');
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
];

/** The app's page: no key, only what its backend handed it (base URL, job id, token). */
const PAGE = `<!doctype html><title>app</title><script>
window.streamJob = (base, id, token) => new Promise((resolve) => {
  const chunks = [];
  const es = new EventSource(base + '/v2/echo/stream/' + id + '?token=' + encodeURIComponent(token));
  es.onmessage = (e) => chunks.push(JSON.parse(e.data).output);
  es.addEventListener('done', (e) => { es.close(); resolve({ chunks, done: JSON.parse(e.data) }); });
  es.onerror = () => { if (es.readyState === EventSource.CLOSED) resolve({ chunks, failed: true }); };
});
window.readStatus = async (base, id, token) => {
  const r = await fetch(base + '/v2/echo/status/' + id, { headers: { authorization: 'Bearer ' + token } });
  return { status: r.status, body: await r.json() };
};
</script>`;

async function run(base: string, body: unknown) {
  const r = await fetch(`${base}/v2/echo/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await r.json()) as { id: string; token: string };
}

describe.skipIf(!CHROMIUM)(
  `job tokens in Chromium${CHROMIUM ? '' : ' (skipped: no `chromium` on PATH; apt-get install chromium)'}`,
  () => {
    const clock = new ManualClock(Date.now());
    let api: Awaited<ReturnType<typeof listening>>;
    let app: ReturnType<typeof createHttpServer>;
    let browser: Browser;
    let page: Page;
    let w: ScriptedWorker;
    beforeAll(async () => {
      // heartbeatMs: the scripted worker answers no pings, and a loaded machine can take long to launch Chromium.
      api = await listening({ clock, jobTokenSecret: 'browser-test-job-token-secret', heartbeatMs: 120_000 });
      w = await ScriptedWorker.connect(api.url, { concurrency: 4 });
      app = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
      await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
      browser = await chromium.launch({ executablePath: CHROMIUM!, args: FLAGS, timeout: 30_000 });
      page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${(app.address() as AddressInfo).port}/`);
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await w?.close();
      await new Promise((r) => app?.close(r));
      await api?.[Symbol.asyncDispose]();
    });

    it('streams its job from another origin with only the token; refused on another job', async () => {
      const a = await run(api.url, { input: { n: 1 }, token: { ttlSeconds: 60 } });
      const b = await run(api.url, { input: { n: 2 } });
      const streamed = page.evaluate(
        ([base, id, token]) => window.streamJob(base, id, token),
        [api.url, a.id, a.token],
      );
      let assign = await w.next('job.assign');
      while (assign.id !== a.id) assign = await w.next('job.assign');
      w.send({ type: 'job.stream', id: a.id, attempt: assign.attempt, seq: 0, chunks: ['Once', ' upon'] });
      w.send({ type: 'job.stream', id: a.id, attempt: assign.attempt, seq: 2, chunks: [' a time'] });
      w.send({ type: 'job.complete', id: a.id, attempt: assign.attempt, output: 'Once upon a time' });
      const got = await streamed;
      expect(got.chunks).toEqual(['Once', ' upon', ' a time']);
      expect(got.done).toMatchObject({ id: a.id, status: 'COMPLETED', output: 'Once upon a time' });
      const st = await page.evaluate(
        ([base, id, token]) => window.readStatus(base, id, token),
        [api.url, a.id, a.token],
      );
      expect(st).toMatchObject({ status: 200, body: { id: a.id, status: 'COMPLETED' } });
      // The same token on job b: the fetch reads the coded refusal, the EventSource fails without a chunk.
      const other = await page.evaluate(
        ([base, id, token]) => window.readStatus(base, id, token),
        [api.url, b.id, a.token],
      );
      expect(other).toMatchObject({ status: 403, body: { code: 'job_token_not_allowed' } });
      const es = await page.evaluate(
        ([base, id, token]) => window.streamJob(base, id, token),
        [api.url, b.id, a.token],
      );
      expect(es).toEqual({ chunks: [], failed: true });
    });

    it('is refused once the token expired (server clock), by fetch and by EventSource', async () => {
      const c = await run(api.url, { input: { n: 3 }, token: { ttlSeconds: 30 } });
      const ok = await page.evaluate(
        ([base, id, token]) => window.readStatus(base, id, token),
        [api.url, c.id, c.token],
      );
      expect(ok.status).toBe(200);
      clock.advance(30_000);
      const late = await page.evaluate(
        ([base, id, token]) => window.readStatus(base, id, token),
        [api.url, c.id, c.token],
      );
      expect(late).toMatchObject({ status: 401, body: { code: 'job_token_expired' } });
      const es = await page.evaluate(
        ([base, id, token]) => window.streamJob(base, id, token),
        [api.url, c.id, c.token],
      );
      expect(es).toEqual({ chunks: [], failed: true });
    });
  },
);
