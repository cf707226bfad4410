// @berth/client against `berth dev` running examples/basic (real worker processes): every method, errors, the
// abort signal, idempotency keys. Faults (dropped streams, lost answers, 429/503) are in client-faults.test.ts.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BerthApiError, createClient, type Endpoint } from '@berth/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BASIC_ENDPOINTS, REPO_ROOT, pollUntil, startBerthDev, type BerthDev } from './harness.test-helpers.js';

let dev: BerthDev;
let ep: (id: string) => Endpoint;

beforeAll(async () => {
  dev = await startBerthDev({ waitForWorkers: BASIC_ENDPOINTS, readyTimeoutMs: 90_000 });
  const berth = createClient({ baseUrl: `${dev.url}/v2`, apiKey: dev.apiKey });
  ep = (id) => berth.endpoint(id);
}, 120_000);
afterAll(async () => {
  await dev?.[Symbol.asyncDispose]();
});

const chunks = (n: number) => Array.from({ length: n }, (_, i) => ({ index: i, text: `chunk ${i}` }));

describe('@berth/client against berth dev', () => {
  it('runSync answers the finished job', async () => {
    const job = await ep('echo').runSync({ hello: 'world', n: [1, 2] });
    expect(job).toMatchObject({ status: 'COMPLETED', output: { hello: 'world', n: [1, 2] } });
    expect(job.id).toMatch(/^sync-/);
  });

  it('runSync keeps waiting (status-sync) past the server wait of one request', async () => {
    const job = await ep('sleep').runSync({ ms: 1500 }, { waitMs: 1000 });
    expect(job).toMatchObject({ status: 'COMPLETED', output: { slept: 1500 } });
  });

  it('run, status, then wait until COMPLETED', async () => {
    const echo = ep('echo');
    const queued = await echo.run({ x: 42 });
    expect(queued).toMatchObject({ status: 'IN_QUEUE' });
    expect(['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED']).toContain((await echo.status(queued.id)).status);
    expect(await echo.wait(queued.id, { waitMs: 1000 })).toMatchObject({
      id: queued.id,
      status: 'COMPLETED',
      output: { x: 42 },
    });
  });

  it('stream yields every chunk in order and returns the final job', async () => {
    const s = ep('stream');
    const { id } = await s.run({ chunks: 6, delayMs: 50 });
    const got: unknown[] = [];
    const it = s.stream(id);
    let r = await it.next();
    for (; !r.done; r = await it.next()) got.push(r.value);
    expect(got).toEqual(chunks(6));
    expect(r.value).toMatchObject({ id, status: 'COMPLETED', output: chunks(6) });
  });

  it('cancel stops a running job; logs(id) shows what the handler logged', async () => {
    const sleep = ep('sleep');
    const { id } = await sleep.run({ ms: 60_000 });
    await pollUntil(
      () => sleep.status(id),
      (j) => j.status === 'IN_PROGRESS',
      10_000,
    );
    expect(await sleep.cancel(id)).toMatchObject({ id, status: 'CANCELLED' });
    const logs = await pollUntil(
      () => sleep.logs(id),
      (l) => l.logs.some((x) => /aborted after/.test(x.message)),
      10_000,
    );
    expect(logs.id).toBe(id);
  });

  it('retry requeues a FAILED job', async () => {
    const fail = ep('fail');
    const failed = await fail.runSync({});
    expect(failed.status).toBe('FAILED');
    expect(await fail.retry(failed.id)).toEqual({ id: failed.id, status: 'IN_QUEUE' });
    expect(await fail.wait(failed.id)).toMatchObject({ status: 'FAILED', retries: 1 });
    await expect(fail.retry('no-such-job-u1')).rejects.toMatchObject({ code: 'job_not_found', status: 404 });
  });

  it('purgeQueue removes queued jobs only; health counts jobs and workers', async () => {
    const sleep = ep('sleep');
    const ids = await Promise.all([1, 2, 3, 4].map(async () => (await sleep.run({ ms: 30_000 })).id));
    await pollUntil(
      () => sleep.health(),
      (h) => h.jobs.inProgress === 2 && h.jobs.inQueue === 2,
      10_000,
    );
    expect(await sleep.purgeQueue()).toEqual({ removed: 2, status: 'completed' });
    const health = await sleep.health();
    expect(health.jobs.inQueue).toBe(0);
    expect(health.workers.running).toBeGreaterThanOrEqual(1);
    await Promise.all(ids.map((id) => sleep.cancel(id).catch(() => undefined)));
  });

  it('errors carry the server code: job_not_found, invalid_request with details, unauthorized', async () => {
    const err = await ep('echo')
      .status('nope-u1')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BerthApiError);
    expect(err).toMatchObject({ status: 404, code: 'job_not_found' });
    await expect(ep('echo').run({}, { policy: { ttl: 5 } })).rejects.toMatchObject({
      code: 'invalid_request',
      details: [expect.objectContaining({ path: 'policy.ttl' })],
    });
    const wrong = createClient({ baseUrl: `${dev.url}/v2`, apiKey: 'wrong' }).endpoint('echo');
    await expect(wrong.health()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('an input schema checks the input before anything is sent', async () => {
    let requests = 0;
    const counting = createClient({
      baseUrl: `${dev.url}/v2`,
      apiKey: dev.apiKey,
      fetch: (u, i) => (requests++, fetch(u, i)),
    });
    const greet = counting.endpoint('echo', { input: z.object({ name: z.string().min(1) }) });
    await expect(greet.run({ name: '' })).rejects.toMatchObject({ code: 'invalid_request', status: 400 });
    expect(requests).toBe(0);
    expect((await greet.runSync({ name: 'Ada' })).output).toEqual({ name: 'Ada' });
    expect(requests).toBe(1);
  });

  it('an AbortSignal stops a call at once', async () => {
    const sleep = ep('sleep');
    const { id } = await sleep.run({ ms: 30_000 });
    const started = performance.now();
    await expect(sleep.wait(id, { signal: AbortSignal.timeout(300) })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - started).toBeLessThan(3000);
    const ctl = new AbortController();
    const streaming = ep('stream').stream((await ep('stream').run({ chunks: 50, delayMs: 100 })).id, {
      signal: ctl.signal,
    });
    await streaming.next();
    ctl.abort(new Error('enough'));
    await expect(streaming.next()).rejects.toThrow('enough');
    await sleep.cancel(id);
  });

  it('the same idempotencyKey answers the same job; without one, each call is a new job', async () => {
    const echo = ep('echo');
    const key = `order-${Date.now()}`;
    const a = await echo.run({ n: 1 }, { idempotencyKey: key });
    const b = await echo.run({ n: 1 }, { idempotencyKey: key });
    expect(b.id).toBe(a.id);
    await expect(echo.run({ n: 2 }, { idempotencyKey: key })).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    expect((await echo.run({ n: 1 })).id).not.toBe((await echo.run({ n: 1 })).id);
  });

  it('token: the submit answers a job token that reads its job and nothing else; token(id) issues one that may cancel', async () => {
    const sleep = ep('sleep');
    const queued = await sleep.run({ ms: 20_000 }, { token: { ttlSeconds: 60 } });
    expect(queued.token).toMatch(/^berth_jt_/);
    const browser = createClient({ baseUrl: `${dev.url}/v2`, token: queued.token as string }).endpoint('sleep');
    expect((await browser.status(queued.id)).id).toBe(queued.id);
    await expect(browser.run({ ms: 1 })).rejects.toMatchObject({ status: 403, code: 'job_token_not_allowed' });
    await expect(browser.cancel(queued.id)).rejects.toMatchObject({ status: 403 });
    const { token } = await sleep.token(queued.id, { ttlSeconds: 30, cancel: true });
    const canceller = createClient({ baseUrl: `${dev.url}/v2`, token }).endpoint('sleep');
    expect(await canceller.cancel(queued.id)).toMatchObject({ id: queued.id, status: 'CANCELLED' });
  });

  it('webhookEvents: the webhook gets the events asked for (start, completed), each named in webhook-event', async () => {
    const got: { event: string; body: { id: string; event: string } }[] = [];
    const rx = createServer((req, res) => {
      let raw = '';
      req.on('data', (d: Buffer) => (raw += d));
      req.on('end', () => {
        got.push({ event: String(req.headers['webhook-event']), body: JSON.parse(raw) });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hook`;
      const { id } = await ep('echo').run({ hook: 1 }, { webhook: url, webhookEvents: ['start', 'completed'] });
      await pollUntil(
        async () => got.length,
        (n) => n >= 2,
        15_000,
      );
      expect(got.map((g) => g.event).sort()).toEqual(['completed', 'start']);
      for (const g of got) expect(g.body).toMatchObject({ id, event: g.event });
    } finally {
      rx.close();
    }
  });

  it("the playground's @berth/client snippets run as written (node, the key from BERTH_API_KEY)", async () => {
    const { snippets } = (await import(join(REPO_ROOT, 'packages/server/playground/snippets.js'))) as {
      snippets: (lang: string, origin: string, target: string, input: unknown) => { run: string; runsync: string };
    };
    const code = snippets('client', dev.url, 'echo', { from: 'snippet' });
    // Inside the checkout, so `@berth/client` resolves to the workspace package as it would from npm.
    const dir = mkdtempSync(join(REPO_ROOT, '.client-snippet-'));
    try {
      for (const op of ['run', 'runsync'] as const) {
        writeFileSync(join(dir, `${op}.mjs`), code[op]);
        const { stdout } = await promisify(execFile)(process.execPath, [join(dir, `${op}.mjs`)], {
          env: { ...process.env, BERTH_API_KEY: dev.apiKey },
          timeout: 20_000,
        });
        expect(stdout, op).toMatch(/status: 'COMPLETED'/);
        expect(stdout, op).toMatch(/from: 'snippet'/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
