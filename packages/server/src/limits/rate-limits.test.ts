import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { ConfigError } from '../errors.js';
import { resolveServerOptions } from '../options.js';
import { API_KEY, ScriptedWorker, call, listening, testServer, until } from '../testing.test-helpers.js';
import type { BerthServer } from '../server.js';
import { FixedWindowCounter } from './fixed-window.js';
import { resolveRateLimits } from './rate-limit-options.js';
import { createRateLimitGuard } from './rate-limit-guard.js';

const WINDOW_START = 1_700_000_000_000; // a multiple of 10 s

/** How many of `n` calls pass before the first 429. */
async function allowed(s: BerthServer, path: string, n: number, method = 'GET', key = API_KEY): Promise<number> {
  let ok = 0;
  for (let i = 0; i < n; i++) {
    const r = await call(s, method, path, { headers: { authorization: `Bearer ${key}` } });
    if (r.status === 200) ok++;
    else {
      expect(r.status).toBe(429);
      expect(r.body.code).toBe('rate_limited');
    }
  }
  return ok;
}

describe('FixedWindowCounter', () => {
  it('allows `limit` hits per key per window, answers the seconds left, and forgets old windows', () => {
    const c = new FixedWindowCounter(10_000);
    expect(c.hit('a', 2, WINDOW_START).ok).toBe(true);
    expect(c.hit('a', 2, WINDOW_START + 1).ok).toBe(true);
    expect(c.hit('a', 2, WINDOW_START + 2_500)).toEqual({ ok: false, retryAfterSec: 8 });
    expect(c.hit('a', 2, WINDOW_START + 9_999)).toEqual({ ok: false, retryAfterSec: 1 });
    expect(c.hit('b', 2, WINDOW_START + 9_999).ok).toBe(true);
    for (let i = 0; i < 1000; i++) c.hit(`k${i}`, 5, WINDOW_START + 5);
    expect(c.size).toBe(1002);
    expect(c.hit('a', 2, WINDOW_START + 10_000).ok).toBe(true); // next window
    expect(c.size).toBe(1); // the previous window's counts are gone
  });
});

describe('rate limits through the API', () => {
  it('429 rate_limited with Retry-After past the base limit; per key, per endpoint, per operation; resets with the window', async () => {
    const clock = new ManualClock(WINDOW_START + 4_000);
    const s = testServer({ clock, endpoints: ['echo', 'other'], apiKeys: [API_KEY, 'second-key'] });
    for (let i = 0; i < 2; i++) expect((await call(s, 'POST', '/v2/echo/purge-queue')).status).toBe(200);
    const r = await call(s, 'POST', '/v2/echo/purge-queue');
    expect(r.status).toBe(429);
    expect(r.body.code).toBe('rate_limited');
    expect(r.headers['retry-after']).toBe('6');
    expect(r.body.details).toMatchObject({ limit: 2, operation: 'purge-queue', retryAfter: 6 });
    expect((await call(s, 'POST', '/v2/other/purge-queue')).status).toBe(200); // other endpoint
    expect(
      (await call(s, 'POST', '/v2/echo/purge-queue', { headers: { authorization: 'Bearer second-key' } })).status,
    ).toBe(200); // other key
    expect((await call(s, 'GET', '/v2/echo/health')).status).toBe(200); // other operation
    clock.advance(6_000); // next window
    expect((await call(s, 'POST', '/v2/echo/purge-queue')).status).toBe(200);
    await s.close({ drainMs: 0 });
  });

  it('refusals are not counted against other checks: a 401 or 404 never consumes the quota', async () => {
    const clock = new ManualClock(WINDOW_START);
    const s = testServer({ clock });
    for (let i = 0; i < 5; i++)
      expect(
        (await call(s, 'POST', '/v2/echo/purge-queue', { headers: { authorization: 'Bearer wrong' } })).status,
      ).toBe(401);
    expect(await allowed(s, '/v2/echo/purge-queue', 3, 'POST')).toBe(2);
    await s.close({ drainMs: 0 });
  });

  it('status-sync and status share the status limit; limits are configurable per operation', async () => {
    const clock = new ManualClock(WINDOW_START);
    const s = testServer({ clock, rateLimits: { base: { status: 3 } } });
    const id = (await call(s, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    expect((await call(s, 'GET', `/v2/echo/status/${id}`)).status).toBe(200);
    expect((await call(s, 'POST', `/v2/echo/cancel/${id}`)).status).toBe(200);
    expect((await call(s, 'GET', `/v2/echo/status-sync/${id}?wait=1000`)).status).toBe(200);
    expect((await call(s, 'GET', `/v2/echo/status/${id}`)).status).toBe(200);
    expect((await call(s, 'GET', `/v2/echo/status-sync/${id}`)).status).toBe(429);
    await s.close({ drainMs: 0 });
  });

  it('the effective limit rises with running workers: max(base, workers x perWorker)', async () => {
    const clock = new ManualClock(WINDOW_START);
    await using t = await listening({ clock, rateLimits: { base: { health: 4 }, perWorker: 3 } });
    const measured: number[] = [];
    const workers: ScriptedWorker[] = [];
    for (const n of [0, 1, 2, 3]) {
      while (workers.length < n) {
        const w = await ScriptedWorker.connect(t.url, { workerId: `w${workers.length + 1}` });
        await w.next('welcome');
        workers.push(w);
      }
      clock.advance(10_000); // a fresh window for each measurement
      measured.push(await allowed(t.server, '/v2/echo/health', 20));
    }
    expect(measured).toEqual([4, 4, 6, 9]); // max(4, 0), max(4, 3), max(4, 6), max(4, 9)
    // A draining worker does not count.
    workers[2]!.send({ type: 'draining' });
    await until(() => t.server.workers.connected('echo').some((w) => w.draining), 2000, 'the worker to be draining');
    clock.advance(10_000);
    expect(await allowed(t.server, '/v2/echo/health', 20)).toBe(6);
    for (const w of workers) await w.close();
    await until(() => t.server.workers.connected('echo').length === 0, 2000, 'workers gone');
    clock.advance(10_000);
    expect(await allowed(t.server, '/v2/echo/health', 20)).toBe(4);
  });

  it('with several replicas, each allows its share ceil(limit / replicas): the cluster-wide total stays within limit + replicas - 1', () => {
    const clock = new ManualClock(WINDOW_START);
    let replicas = 3;
    const guard = createRateLimitGuard({
      limits: resolveRateLimits({ base: { run: 10 } }),
      clock,
      runningWorkers: () => 0,
      replicas: () => replicas,
    });
    const hits = () => {
      let n = 0;
      while (!guard({ principal: { keyId: 'k' }, endpointId: 'echo', operation: 'run' })) n++;
      return n;
    };
    expect(hits()).toBe(4); // ceil(10 / 3): three replicas admit at most 12 = 10 + 3 - 1
    replicas = 1;
    clock.advance(10_000);
    expect(hits()).toBe(10);
  });

  it('off switch: rateLimits { enabled: false } lets everything through', async () => {
    const s = testServer({ clock: new ManualClock(WINDOW_START), rateLimits: { enabled: false } });
    expect(await allowed(s, '/v2/echo/purge-queue', 30, 'POST')).toBe(30);
    await s.close({ drainMs: 0 });
  });

  it('takes one form, an object: the old boolean form is refused with a ConfigError naming its equivalent', () => {
    for (const enabled of [true, false]) {
      let err: unknown;
      try {
        resolveServerOptions({ rateLimits: enabled as never });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect(err).toMatchObject({
        code: 'invalid_request',
        message: `option rateLimits must be an object: write rateLimits: { enabled: ${enabled} } (got ${enabled})`,
      });
    }
    expect(resolveRateLimits({ enabled: false }).enabled).toBe(false);
    expect(resolveRateLimits({}).enabled).toBe(true);
  });

  it('bad options name the option', () => {
    expect(() => resolveRateLimits({ base: { bogus: 1 } as never })).toThrow(
      /rateLimits.base: unknown operation "bogus"/,
    );
    expect(() => resolveRateLimits({ perWorker: -1 })).toThrow(/rateLimits.perWorker/);
    expect(() => resolveRateLimits({ base: { run: 1.5 } })).toThrow(/rateLimits.base.run/);
    expect(() => resolveRateLimits({ enabled: 'no' as never })).toThrow(/rateLimits.enabled must be true or false/);
    expect(() => resolveRateLimits('off' as never)).toThrow(/rateLimits must be an object .*\(got "off"\)/);
    expect(resolveRateLimits(undefined).base).toMatchObject({
      runsync: 2000,
      run: 1000,
      status: 2000,
      stream: 2000,
      cancel: 100,
      'purge-queue': 2,
      health: 2000,
      openai: 2000,
    });
  });
});
