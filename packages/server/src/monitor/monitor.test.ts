import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { MemoryKeyStore } from '../keys/key-store.js';
import { createApiKey } from '../keys/create-key.js';
import { bucketsOf, parseExposition, sampleValue } from '../metrics/metrics-exposition.test-helpers.js';
import { bucketQuantile } from '../metrics/quantile.js';
import { API_KEY, call, listening, ScriptedWorker, until, untilStatus } from '../testing.test-helpers.js';
import { EndpointRing, SLOT_MS, SLOTS } from './endpoint-ring.js';

const T0 = 1_700_000_000_000 - (1_700_000_000_000 % SLOT_MS); // a slot boundary
const idle = { idle: 1, running: 0, starting: 0, draining: 0, unhealthy: 0 };

describe('EndpointRing (fixed memory, injected times)', () => {
  it('puts counts, gauges and times in the slot of their time, oldest first, and forgets a slot an hour later', () => {
    const r = new EndpointRing();
    r.addDone(T0 + 1, 4, 1);
    r.gauges(T0 + 2, 7, idle);
    r.gauges(T0 + 3, 5, { ...idle, running: 2 }); // the last sample of a slot wins
    r.times(T0 + 4, 300, 1200);
    r.coldStart(T0 + SLOT_MS);
    const w = r.window(T0 + SLOT_MS + 10, 3);
    expect(w.t).toEqual([T0 - SLOT_MS, T0, T0 + SLOT_MS]);
    expect(w.completed).toEqual([null, 4, 0]); // null: nothing recorded in that slot
    expect(w.failed).toEqual([null, 1, 0]);
    expect(w.coldStarts).toEqual([null, 0, 1]);
    expect(w.queue).toEqual([null, 5, null]);
    expect(w.workers.running).toEqual([null, 2, null]);
    expect(w.delayP50).toEqual([null, 375, null]); // one job in (250, 500] ms: its middle
    expect(w.execP95).toEqual([null, 2425, null]); // in (1000, 2500]: 1000 + 1500 * 0.95
    expect(w.totals).toMatchObject({ completed: 4, failed: 1, coldStarts: 1, delayP50: 375 });
    // An hour later the same row holds a new slot: the old one is gone, not added to.
    r.addDone(T0 + SLOTS * SLOT_MS, 2, 0);
    const later = r.window(T0 + SLOTS * SLOT_MS, SLOTS);
    expect(later.totals.completed).toBe(2);
    expect(later.queue.filter((q) => q !== null)).toEqual([]);
  });
});

describe('GET /v2/<ep>/monitor (real socket, scripted worker, manual clock)', () => {
  it('charts what /metrics counts: jobs, cold starts, queue depth, workers, delay and execution percentiles', async () => {
    const clock = new ManualClock(T0);
    await using s = await listening({ clock });
    const monitor = async (window = 60) => (await call(s.server, 'GET', `/v2/echo/monitor?window=${window}`)).body;
    await monitor(); // the baseline sample
    // A job waits 300 ms for a worker to start (a cold start), runs 1200 ms.
    const first = (await call(s.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body['id'] as string;
    clock.advance(300);
    const w = await ScriptedWorker.connect(s.url, { workerId: 'm-1' });
    const a = await w.next('job.assign');
    clock.advance(1200);
    w.send({ type: 'job.complete', id: a.id, attempt: a.attempt, output: 1 });
    await untilStatus(s.server, 'echo', first, 'COMPLETED');
    expect((await monitor()).completed.at(-1)).toBe(1); // sampled on read: counted in this slot
    // Next slot: one job fails after 40 ms, one runs, one waits.
    clock.advance(SLOT_MS);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await call(s.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body['id']);
    const b = await w.next('job.assign');
    clock.advance(40);
    w.send({ type: 'job.fail', id: b.id, attempt: b.attempt, error: 'boom' });
    await untilStatus(s.server, 'echo', b.id, 'FAILED');
    await w.next('job.assign'); // the second runs now; the third waits
    await until(async () => (await monitor()).queue.at(-1) === 1);
    const m = await monitor();
    expect(m.slotMs).toBe(SLOT_MS);
    expect(m.t).toHaveLength(60_000 / SLOT_MS);
    expect(m.t.at(-1)).toBe(T0 + SLOT_MS);
    expect(m.completed.slice(-2)).toEqual([1, 0]);
    expect(m.failed.slice(-2)).toEqual([0, 1]);
    expect(m.coldStarts.slice(-2)).toEqual([1, 0]);
    expect(m.workers.running.at(-1)).toBe(1);
    expect(m.delayP50.at(-2)).toBe(375);
    expect(m.execP50.at(-2)).toBe(1750); // one job of 1200 ms in (1000, 2500]: the bucket's middle
    // The same figures as /metrics.
    const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const { samples } = parseExposition(await res.text());
    expect(m.totals.completed).toBe(sampleValue(samples, 'berth_jobs_completed_total', { endpoint: 'echo' }));
    expect(m.totals.failed).toBe(sampleValue(samples, 'berth_jobs_failed_total', { endpoint: 'echo' }));
    expect(m.totals.coldStarts).toBe(sampleValue(samples, 'berth_worker_cold_starts_total', { endpoint: 'echo' }));
    expect(m.queue.at(-1)).toBe(sampleValue(samples, 'berth_queue_depth', { endpoint: 'echo' }));
    expect(m.workers.running.at(-1)).toBe(
      sampleValue(samples, 'berth_workers', { endpoint: 'echo', state: 'running' }),
    );
    for (const [field, name, q] of [
      ['delayP50', 'berth_job_delay_seconds', 0.5],
      ['delayP95', 'berth_job_delay_seconds', 0.95],
      ['execP95', 'berth_job_execution_seconds', 0.95],
    ] as const) {
      const { bounds, counts } = bucketsOf(samples, name, { endpoint: 'echo' });
      expect(m.totals[field], field).toBeCloseTo(bucketQuantile(q, bounds, counts)!, 3);
    }
    await w.close();
  });

  it('checks its window, answers GET only, and follows the key scopes of /health', async () => {
    const keyStore = new MemoryKeyStore();
    await using s = await listening({ keyStore, endpoints: ['echo', 'other'] });
    const bad = await call(s.server, 'GET', '/v2/echo/monitor?window=5');
    expect(bad.status).toBe(400);
    expect(bad.body['code']).toBe('invalid_request');
    expect(bad.body['error']).toMatch(/window must be a whole number of seconds from 60 to 3600, got "5"/);
    const post = await call(s.server, 'POST', '/v2/echo/monitor');
    expect(post.status).toBe(405);
    expect(post.headers['allow']).toBe('GET');
    expect((await call(s.server, 'GET', '/v2/echo/monitor?window=3600')).body['t']).toHaveLength(SLOTS);
    const readOnly = (await createApiKey(keyStore, { readOnly: true, endpoints: ['echo'] })).secret;
    const as = (path: string) => call(s.server, 'GET', path, { headers: { authorization: `Bearer ${readOnly}` } });
    expect((await as('/v2/echo/monitor')).status).toBe(200);
    expect((await as('/v2/other/monitor')).status).toBe(403);
  });
});
