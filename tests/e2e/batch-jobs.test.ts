// Batch Jobs (RunPod's /batch routes, issue #38) through the real `berth dev` running examples/basic, with real
// worker processes and @berth/client's typed batch calls: build a batch in several calls, finalize it, page
// through every result; interactive /run traffic submitted meanwhile is served while the batch waits behind it.
import { createClient, type Endpoint } from '@berth/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBerthDev, type BerthDev } from './harness.test-helpers.js';

/** `fn()` until it answers something other than undefined, bounded. */
async function until<T>(fn: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

let dev: BerthDev;
let echo: Endpoint;
let sleep: Endpoint;

beforeAll(async () => {
  dev = await startBerthDev({ waitForWorkers: ['echo', 'sleep'], readyTimeoutMs: 90_000 });
  const berth = createClient({ baseUrl: `${dev.url}/v2`, apiKey: dev.apiKey });
  echo = berth.endpoint('echo');
  sleep = berth.endpoint('sleep');
}, 120_000);
afterAll(async () => {
  await dev?.[Symbol.asyncDispose]();
});

const sum = (b: Record<string, unknown>) =>
  ['requestQueued', 'requestInProgress', 'requestCompleted', 'requestFailed', 'requestCancelled', 'requestExpired']
    .map((k) => b[k] as number)
    .reduce((x, y) => x + y, 0);

describe('Batch Jobs through berth dev and @berth/client', () => {
  it('runs a batch built in three calls and pages through every result once', async () => {
    const created = await echo.batches.create(
      Array.from({ length: 40 }, (_, i) => ({ input: { i } })),
      { name: 'e2e' },
    );
    expect(created).toMatchObject({ status: 'DRAFT', requestTotal: 40, name: 'e2e' });
    const more = await echo.batches.add(created.id, [{ input: { i: 40 } }, { input: { i: 41 } }]);
    expect(more.requestIds).toHaveLength(2);
    await echo.batches.remove(created.id, more.requestIds[1]!);
    const fin = await echo.batches.finalize(created.id);
    expect(fin.status).toBe('FINALIZED');
    const ended = await until(
      async () => {
        const b = await echo.batches.get(created.id);
        expect(sum(b as unknown as Record<string, unknown>)).toBe(b.requestTotal);
        return b.finishedAt ? b : undefined;
      },
      30_000,
      'the batch to end',
    );
    expect(ended).toMatchObject({ status: 'FINALIZED', done: true, requestTotal: 41, requestCompleted: 41 });
    const seen = new Map<string, unknown>();
    for await (const r of echo.batches.requests(created.id, { limit: 7 })) {
      expect(seen.has(r.id)).toBe(false);
      seen.set(r.id, r.output);
      expect(r.batchId).toBe(created.id);
    }
    expect(seen.size).toBe(41);
    expect(new Set([...seen.values()].map((o) => (o as { i: number }).i))).toEqual(
      new Set(Array.from({ length: 41 }, (_, i) => i)),
    );
    const listed = await echo.batches.list();
    expect(listed.batches[0]?.id).toBe(created.id);
  }, 60_000);

  it('serves a /run job submitted after a queued batch before the rest of the batch; cancel stops the rest', async () => {
    // `sleep` has one worker with concurrency 2: the batch's 1 s jobs fill it; a later /run goes next.
    const b = await sleep.batches.create(Array.from({ length: 8 }, () => ({ input: { ms: 1000 } })));
    await sleep.batches.finalize(b.id);
    await until(
      async () => ((await sleep.batches.get(b.id)).requestInProgress > 0 ? true : undefined),
      20_000,
      'the batch to start',
    );
    const started = Date.now();
    const job = await sleep.runSync({ ms: 10 });
    expect(job.status).toBe('COMPLETED');
    // It waited for one running batch job at most (~1 s), not for the 6 queued ones (~3 s more).
    expect(Date.now() - started).toBeLessThan(2500);
    const c = await sleep.batches.cancel(b.id);
    expect(c.status).toBe('CANCELLED');
    expect(c.requestQueued + c.requestInProgress).toBe(0);
    expect(sum(c as unknown as Record<string, unknown>)).toBe(8);
  }, 60_000);
});
