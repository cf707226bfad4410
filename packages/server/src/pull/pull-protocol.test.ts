import type { JobObject } from '@berth/protocol';
import { silentLogger } from '@berth/protocol/log';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { createServer, type BerthServer } from '../server.js';

const KEY = 'k';
const TOKEN = 'tok';
const quiet = silentLogger;

/** The pull protocol on the wire, with requests shaped like runpod-python's (real server, real sockets). */
describe('RunPod pull protocol, request by request', () => {
  let server: BerthServer;
  let url = '';
  beforeEach(async () => {
    server = createServer({
      apiKeys: [KEY],
      workerTokens: [TOKEN],
      endpoints: ['echo'],
      pullHoldMs: 400,
      logger: quiet,
    });
    url = (await server.listen({ port: 0 })).url;
  });
  afterEach(() => server.close({ drainMs: 50 }));

  const worker = (path: string, init: RequestInit = {}) =>
    fetch(`${url}/v2/echo/${path}`, {
      ...init,
      headers: { authorization: TOKEN, ...(init.headers as Record<string, string>) },
    });
  const run = async (input: unknown) =>
    (await (
      await fetch(`${url}/v2/echo/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}` },
        body: JSON.stringify({ input }),
      })
    ).json()) as JobObject;
  const status = async (id: string) =>
    (await (
      await fetch(`${url}/v2/echo/status/${id}`, { headers: { authorization: `Bearer ${KEY}` } })
    ).json()) as JobObject;
  const post = (path: string, body: unknown) =>
    worker(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', charset: 'utf-8' },
      body: JSON.stringify(body),
    });

  it("gives a batch request's job its batchId (runpod-python 1.12 prefixes its log lines with it)", async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    const created = (await (
      await fetch(`${url}/v2/echo/batch`, { method: 'POST', headers: auth, body: '[{"input":{"b":1}}]' })
    ).json()) as { id: string; requestIds: string[] };
    await fetch(`${url}/v2/echo/batch/${created.id}/finalize`, { method: 'POST', headers: auth });
    const res = await worker('job-take/w1?gpu=local&job_in_progress=0');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: created.requestIds[0], input: { b: 1 }, batchId: created.id });
  });

  it('holds an idle job-take, answers 204, and answers a held one as soon as a job comes', async () => {
    const t0 = performance.now();
    const idle = await worker('job-take/w1?gpu=local&job_in_progress=0');
    expect(idle.status).toBe(204);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(350);
    const held = worker('job-take/w1?gpu=local&job_in_progress=0');
    await new Promise((r) => setTimeout(r, 100));
    const { id } = await run({ a: 1 });
    const res = await held;
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ id, input: { a: 1 } });
  });

  it('answers a batch take with an array, and reads JSON results sent as a form type', async () => {
    const a = await run({ n: 1 });
    const b = await run({ n: 2 });
    const res = await worker('job-take-batch/w2?gpu=local&batch_size=4&job_in_progress=0');
    const jobs = (await res.json()) as { id: string }[];
    expect(jobs.map((j) => j.id).sort()).toEqual([a.id, b.id].sort());
    expect((await post(`job-done/w2/${a.id}?gpu=local&isStream=false`, { output: { ok: 'é' } })).status).toBe(200);
    expect((await post(`job-done/w2/${b.id}?gpu=local&isStream=false`, { error: 'bad' })).status).toBe(200);
    expect(await status(a.id)).toMatchObject({ status: 'COMPLETED', output: { ok: 'é' } });
    expect(await status(b.id)).toMatchObject({ status: 'FAILED', error: 'bad' });
    // Progress after the result is ignored.
    await post(`job-done/w2/${a.id}?gpu=local&isStream=false`, { status: 'IN_PROGRESS', output: 50 });
    expect(await status(a.id)).toMatchObject({ status: 'COMPLETED', output: { ok: 'é' } });
  });

  it('answers a bad token 401, then 429 to a worker that polls again at once', async () => {
    const bad = { authorization: 'nope' };
    const first = await worker('job-take/w3?gpu=local', { headers: bad });
    expect(first.status).toBe(401);
    expect(((await first.json()) as { code: string }).code).toBe('unauthorized');
    const again = await worker('job-take/w3?gpu=local', { headers: bad });
    expect(again.status).toBe(429);
    expect(((await again.json()) as { code: string }).code).toBe('rate_limited');
  });

  it('offers a stop, offers it again while pings list the job, and requeues a job pings stop listing', async () => {
    const { id } = await run({});
    const take = await worker('job-take/w4?gpu=local&job_in_progress=0');
    expect(((await take.json()) as { id: string }).id).toBe(id);
    await worker(`ping/w4?gpu=local&job_id=${id}&runpod_version=1.12.0`);
    await fetch(`${url}/v2/echo/cancel/${id}`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` } });
    const stop1 = await worker('job-stop/w4?gpu=local');
    expect(await stop1.json()).toEqual({ jobsToStop: [id] });
    const t0 = performance.now();
    // The worker missed it (too early): offered again about 1 s later, polls before that get 204.
    let stop2 = await worker('job-stop/w4?gpu=local');
    while (stop2.status === 204 && performance.now() - t0 < 3000) stop2 = await worker('job-stop/w4?gpu=local');
    expect(await stop2.json()).toEqual({ jobsToStop: [id] });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(900);

    // A second job, then pings (two ids URL-encoded in one job_id) that stop listing it: requeued.
    const other = await run({ x: 1 });
    const take2 = await worker('job-take/w4?gpu=local&job_in_progress=1');
    expect(((await take2.json()) as { id: string }).id).toBe(other.id);
    await worker(`ping/w4?gpu=local&job_id=${encodeURIComponent(`${id},${other.id}`)}&runpod_version=1.12.0`);
    expect((await status(other.id)).status).toBe('IN_PROGRESS');
    await new Promise((r) => setTimeout(r, 1000));
    await worker('ping/w4?gpu=local&runpod_version=1.12.0');
    await worker('ping/w4?gpu=local&runpod_version=1.12.0');
    expect(await status(other.id)).toMatchObject({ status: 'IN_QUEUE', retries: 1 });
    expect((await worker('job-stop/w4?gpu=local')).status).toBe(204); // the cancelled job left the worker too
  });

  it('executionTimeout and ttl reach the worker as stops (manual clock)', async () => {
    const clock = new ManualClock();
    const s2 = createServer({
      apiKeys: [KEY],
      workerTokens: [TOKEN],
      endpoints: ['echo'],
      pullHoldMs: 300,
      logger: quiet,
      clock,
      sweepIntervalMs: 0,
    });
    const base = (await s2.listen({ port: 0 })).url;
    try {
      const w = (path: string) => fetch(`${base}/v2/echo/${path}`, { headers: { authorization: TOKEN } });
      const submit = async (policy: object) =>
        (
          (await (
            await fetch(`${base}/v2/echo/run`, {
              method: 'POST',
              headers: { authorization: `Bearer ${KEY}` },
              body: JSON.stringify({ input: {}, policy }),
            })
          ).json()) as JobObject
        ).id;
      const slow = await submit({ executionTimeout: 5000 });
      const old = await submit({ ttl: 60_000 });
      const jobs = (await (await w('job-take-batch/w5?gpu=x&batch_size=2&job_in_progress=0')).json()) as {
        id: string;
      }[];
      expect(jobs.map((j) => j.id).sort()).toEqual([slow, old].sort());
      expect((await w('job-stop/w5?gpu=x')).status).toBe(204);
      clock.advance(5001);
      await s2.sweep();
      expect(await (await w('job-stop/w5?gpu=x')).json()).toEqual({ jobsToStop: [slow] });
      clock.advance(60_000);
      await s2.sweep();
      let res = await w('job-stop/w5?gpu=x');
      while (res.status === 204) res = await w('job-stop/w5?gpu=x'); // the first stop is offered again a second later too
      expect(((await res.json()) as { jobsToStop: string[] }).jobsToStop).toContain(old);
    } finally {
      await s2.close({ drainMs: 50 });
    }
  });
});
