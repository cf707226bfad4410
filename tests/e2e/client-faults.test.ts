// @berth/client through a proxy that breaks connections the way networks do, against `berth dev` running
// examples/basic: a server-sent event stream dropped with bytes in flight, a submit whose answer is lost, 503s from
// a balancer, and the server's own 429.
import { createClient } from '@berth/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultProxy } from './fault-proxy.test-helpers.js';
import { startBerthDev, type BerthDev } from './harness.test-helpers.js';

let dev: BerthDev;
let proxy: FaultProxy;
const statuses: number[] = [];
const client = () =>
  createClient({
    baseUrl: `${proxy.url}/v2`,
    apiKey: dev.apiKey,
    retry: { minDelayMs: 50 },
    fetch: async (u, i) => {
      const res = await fetch(u, i);
      statuses.push(res.status);
      return res;
    },
  });

beforeAll(async () => {
  dev = await startBerthDev({ waitForWorkers: ['echo', 'stream'], readyTimeoutMs: 90_000 });
  proxy = await new FaultProxy(dev.url).listen();
}, 120_000);
afterAll(async () => {
  await proxy?.[Symbol.asyncDispose]();
  await dev?.[Symbol.asyncDispose]();
});

/** Faults for the first `n` requests whose head matches `re`, then pass-through. */
function first(n: number, re: RegExp, fault: NonNullable<ReturnType<FaultProxy['pick']>>) {
  let left = n;
  proxy.pick = (head) => (re.test(head) && left-- > 0 ? fault : undefined);
}

describe('@berth/client through a faulty network', () => {
  it('a stream dropped mid-way, with events in flight lost, resumes: every chunk once, in order', async () => {
    const s = client().endpoint('stream');
    const { id } = await s.run({ chunks: 10, delayMs: 150 });
    first(2, /^GET \/v2\/stream\/stream\//, { kind: 'cut-after-events', events: 3 });
    const got: unknown[] = [];
    for await (const c of s.stream(id)) got.push(c);
    expect(got).toEqual(Array.from({ length: 10 }, (_, i) => ({ index: i, text: `chunk ${i}` })));
    const streams = proxy.heads.filter((h) => h.includes(`/stream/${id}`));
    expect(streams.length).toBe(3); // two cut connections, then one to the end
    expect(streams[1]).toMatch(/last-event-id: 1\.3/i);
    expect(streams[2]).toMatch(/last-event-id: 1\.6/i);
  });

  it('a /run whose answer is lost is resent with the same Idempotency-Key: one job', async () => {
    const echo = client().endpoint('echo');
    const before = Date.now();
    first(1, /^POST \/v2\/echo\/run /, { kind: 'cut-answer' });
    const queued = await echo.run({ marker: before });
    const runs = proxy.heads.filter((h) => h.startsWith('POST /v2/echo/run ')).slice(-2);
    const keys = runs.map((h) => /idempotency-key: (\S+)/i.exec(h)?.[1]);
    expect(keys[0]).toBeDefined();
    expect(keys[1]).toBe(keys[0]);
    expect((await echo.wait(queued.id)).output).toEqual({ marker: before });
    const recent = (await (
      await fetch(`${dev.url}/v2/echo/jobs?limit=20`, { headers: { authorization: `Bearer ${dev.apiKey}` } })
    ).json()) as { jobs: { id: string; createdAt: string }[] };
    expect(recent.jobs.filter((j) => Date.parse(j.createdAt) >= before - 1000).map((j) => j.id)).toEqual([queued.id]);
  });

  it('a /runsync whose answer is lost is resent with the same key and answers the one job', async () => {
    const echo = client().endpoint('echo');
    first(1, /^POST \/v2\/echo\/runsync/, { kind: 'cut-answer' });
    const job = await echo.runSync({ sync: 1 });
    expect(job).toMatchObject({ status: 'COMPLETED', output: { sync: 1 } });
    const runs = proxy.heads.filter((h) => h.startsWith('POST /v2/echo/runsync')).slice(-2);
    expect(new Set(runs.map((h) => /idempotency-key: (\S+)/i.exec(h)?.[1])).size).toBe(1);
  });

  it('503 with Retry-After is waited out, then the call goes through', async () => {
    const echo = client().endpoint('echo');
    first(2, /^GET \/v2\/echo\/health/, {
      kind: 'answer',
      status: 503,
      headers: { 'retry-after': '1' },
      body: '{"error":"shutting down","code":"unavailable"}',
    });
    statuses.length = 0;
    const started = performance.now();
    expect((await echo.health()).workers).toBeDefined();
    expect(statuses).toEqual([503, 503, 200]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1900);
  });

  it("the server's own 429 (purge-queue: 50 per 10 s with one worker) is retried after its Retry-After", async () => {
    const echo = client().endpoint('echo');
    statuses.length = 0;
    proxy.pick = () => undefined;
    // One call at a time until the limit is hit: the call that got the 429 waits for the next window, then succeeds.
    for (let i = 0; i < 120 && !statuses.includes(429); i++)
      expect(await echo.purgeQueue()).toMatchObject({ status: 'completed' });
    expect(statuses.filter((s) => s === 429)).toEqual([429]);
    expect(statuses.at(-1)).toBe(200);
  }, 40_000);

  it('without retries, the 503 reaches the caller as BerthApiError unavailable', async () => {
    const echo = createClient({ baseUrl: `${proxy.url}/v2`, apiKey: dev.apiKey, retry: { retries: 0 } }).endpoint(
      'echo',
    );
    first(1, /^GET \/v2\/echo\/health/, { kind: 'answer', status: 503, body: '{"error":"down","code":"unavailable"}' });
    await expect(echo.health()).rejects.toMatchObject({ name: 'BerthApiError', status: 503, code: 'unavailable' });
  });
});
