import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import type { BerthServer } from '../server.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/types.js';
import { ScriptedWorker, call, listening, until } from '../testing.test-helpers.js';
import { webhookReceiver } from '../webhooks/receiver.test-helpers.js';

const STORES: [string, () => Store][] = [
  ['memory store', () => new MemoryStore()],
  ['SQLite store', () => new SqliteStore({ file: ':memory:' })],
];
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const HOOKS = { allow: ['loopback' as const], retryDelayMs: 250, timeoutMs: 400, pollMs: 50, secret: SECRET };

type Summary = Record<string, any>;
const COUNTS = [
  'requestQueued',
  'requestInProgress',
  'requestCompleted',
  'requestFailed',
  'requestCancelled',
  'requestExpired',
];

/** The batch summary, checked to add up (every read of every test). */
async function summary(s: BerthServer, id: string): Promise<Summary> {
  const r = await call(s, 'GET', `/v2/echo/batch/${id}`);
  expect(r.status).toBe(200);
  const b = r.body;
  expect(COUNTS.reduce((n, k) => n + (b[k] as number), 0)).toBe(b.requestTotal);
  return b;
}
const inputs = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ input: { i: from + i } }));

describe.each(STORES)('Batch Jobs over HTTP (%s)', (_name, makeStore) => {
  it('goes DRAFT -> FINALIZED -> ended with counts that add up, batchId on the jobs, and a signed terminal webhook', async () => {
    await using rx = await webhookReceiver([200]);
    await using t = await listening({ store: makeStore(), webhooks: HOOKS });
    const s = t.server;
    const created = await call(s, 'POST', '/v2/echo/batch', {
      body: { name: 'nightly', webhook: rx.url, requests: inputs(2) },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ status: 'DRAFT', name: 'nightly', requestTotal: 2, requestQueued: 2 });
    const id = created.body.id as string;
    expect(id).toMatch(/^batch_/);
    // More requests: a JSON array, JSON lines, and RunPod's {"requests": [...]}.
    const arr = await call(s, 'POST', `/v2/echo/batch/${id}/requests`, { body: inputs(2, 2) });
    const lines = await call(s, 'POST', `/v2/echo/batch/${id}/requests`, {
      raw: '{"input":{"i":4}}\n\n{"input":{"i":5}}\n',
      headers: { 'content-type': 'application/x-ndjson' },
    });
    const obj = await call(s, 'POST', `/v2/echo/batch/${id}/requests`, { body: { requests: inputs(1, 6) } });
    expect([arr.body.requestTotal, lines.body.requestTotal, obj.body.requestTotal]).toEqual([4, 6, 7]);
    const dropped = lines.body.requestIds[0] as string;
    expect((await call(s, 'DELETE', `/v2/echo/batch/${id}/requests/${dropped}`)).body.requestTotal).toBe(6);
    expect((await call(s, 'PUT', `/v2/echo/batch/${id}`, { body: { name: 'renamed' } })).body.name).toBe('renamed');
    const first = created.body.requestIds[0] as string;
    expect((await call(s, 'GET', `/v2/echo/status/${first}`)).body).toMatchObject({
      status: 'IN_QUEUE',
      batchId: id,
      waitingFor: 'batch_draft',
    });
    // A worker gets nothing while the batch is a DRAFT.
    const w = await ScriptedWorker.connect(t.url, { concurrency: 1 });
    await w.next('welcome');
    await new Promise((r) => setTimeout(r, 100));
    expect(w.count('job.assign')).toBe(0);
    expect((await call(s, 'GET', '/v2/echo/health')).body.jobs.inQueue).toBe(0);
    const fin = await call(s, 'POST', `/v2/echo/batch/${id}/finalize`);
    expect(fin.body).toMatchObject({ status: 'FINALIZED', requestTotal: 6 });
    expect((await call(s, 'POST', `/v2/echo/batch/${id}/requests`, { body: inputs(1) })).body.code).toBe(
      'batch_not_draft',
    );
    // The worker runs them: each assignment carries the batch; one fails, the others complete.
    for (let done = 0; done < 6; done++) {
      const a = await w.next('job.assign');
      expect(a.batchId).toBe(id);
      const b = await summary(s, id);
      expect(b.status).toBe('FINALIZED');
      expect(b.requestCompleted + b.requestFailed).toBe(done);
      if (done === 0) w.send({ type: 'job.fail', id: a.id, attempt: a.attempt, error: 'bad input' });
      else w.send({ type: 'job.complete', id: a.id, attempt: a.attempt, output: { ok: a.input['i'] } });
    }
    const ended = await until(
      async () => {
        const b = await summary(s, id);
        return b.finishedAt ? b : undefined;
      },
      5000,
      'the batch to end',
    );
    expect(ended).toMatchObject({
      status: 'FINALIZED',
      done: true,
      progress: 1,
      requestCompleted: 5,
      requestFailed: 1,
    });
    const [req] = await rx.count(1);
    const payload = new Webhook(SECRET).verify(req!.body, req!.headers as Record<string, string>) as Summary;
    expect(payload).toMatchObject({
      id,
      event: 'batch.ended',
      status: 'FINALIZED',
      requestTotal: 6,
      requestCompleted: 5,
    });
    expect(req!.headers['webhook-id']).toBe(`msg_${id}_batch`);
    const listed = (await call(s, 'GET', '/v2/echo/batch')).body;
    expect(listed.batches.map((b: Summary) => b.id)).toEqual([id]);
    await w.close();
  });

  it('cancels mid-batch: queued requests at once, running ones get their cancel, the webhook says CANCELLED', async () => {
    await using rx = await webhookReceiver([200]);
    await using t = await listening({ store: makeStore(), webhooks: HOOKS });
    const s = t.server;
    const id = (await call(s, 'POST', '/v2/echo/batch', { body: { webhook: rx.url, requests: inputs(5) } })).body.id;
    const w = await ScriptedWorker.connect(t.url, { concurrency: 2 });
    await w.next('welcome');
    await call(s, 'POST', `/v2/echo/batch/${id}/finalize`);
    const running = [await w.next('job.assign'), await w.next('job.assign')];
    expect(await summary(s, id)).toMatchObject({ requestInProgress: 2, requestQueued: 3 });
    const c = await call(s, 'POST', `/v2/echo/batch/${id}/cancel`);
    expect(c.body).toMatchObject({ status: 'CANCELLED', requestCancelled: 5, requestQueued: 0, requestInProgress: 0 });
    const stops = [await w.next('job.cancel'), await w.next('job.cancel')];
    expect(stops.map((m) => m.id).sort()).toEqual(running.map((m) => m.id).sort());
    expect(stops.every((m) => m.reason === 'cancelled')).toBe(true);
    const [req] = await rx.count(1);
    expect(JSON.parse(req!.body)).toMatchObject({ id, status: 'CANCELLED', requestCancelled: 5, done: true });
    expect((await summary(s, id)).finishedAt).toBeGreaterThan(0);
    // Cancelling again answers the batch as it is; no job was handed out after the cancel.
    expect((await call(s, 'POST', `/v2/echo/batch/${id}/cancel`)).body.status).toBe('CANCELLED');
    expect(w.count('job.assign')).toBe(2);
    await w.close();
  });

  it('pages through every request exactly once, by cursor and by offset', async () => {
    await using t = await listening({ store: makeStore() });
    const s = t.server;
    const created = await call(s, 'POST', '/v2/echo/batch', { body: inputs(23) });
    const id = created.body.id as string;
    const all = [...(created.body.requestIds as string[])].sort();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await call(s, 'GET', `/v2/echo/batch/${id}/requests?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.body).toMatchObject({ total: 23, limit: 7 });
      seen.push(...r.body.requests.map((x: Summary) => x.id));
      expect(r.body.hasMore).toBe(r.body.nextCursor !== null);
      cursor = r.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all);
    const byOffset: string[] = [];
    for (let offset = 0; offset < 23; offset += 10) {
      const r = await call(s, 'GET', `/v2/echo/batch/${id}/requests?limit=10&offset=${offset}`);
      byOffset.push(...r.body.requests.map((x: Summary) => x.id));
    }
    expect(byOffset).toEqual(all);
    expect((await call(s, 'GET', `/v2/echo/batch/${id}/requests?limit=0`)).body.code).toBe('invalid_limit');
  });

  it('claims a /run job before every queued batch request (one worker)', async () => {
    await using t = await listening({ store: makeStore() });
    const s = t.server;
    const w = await ScriptedWorker.connect(t.url, { concurrency: 1 });
    await w.next('welcome');
    const busy = (await call(s, 'POST', '/v2/echo/run', { body: { input: { first: true } } })).body.id;
    const a = await w.next('job.assign');
    expect(a.id).toBe(busy);
    const id = (await call(s, 'POST', '/v2/echo/batch', { body: inputs(5) })).body.id;
    await call(s, 'POST', `/v2/echo/batch/${id}/finalize`);
    const interactive = (await call(s, 'POST', '/v2/echo/run', { body: { input: { late: true } } })).body.id;
    w.send({ type: 'job.complete', id: busy, attempt: a.attempt, output: null });
    const next = await w.next('job.assign');
    expect(next.id).toBe(interactive);
    expect(next.batchId).toBeUndefined();
    w.send({ type: 'job.complete', id: next.id, attempt: next.attempt, output: null });
    expect((await w.next('job.assign')).batchId).toBe(id);
    await w.close();
  });

  it('refuses what passes a limit or is malformed, with stable codes', async () => {
    await using t = await listening({ store: makeStore(), batches: { maxOpen: 2, maxQueued: 4, maxPerCall: 3 } });
    const s = t.server;
    const code = async (method: string, path: string, body?: unknown) => {
      const r = await call(s, method, path, body === undefined ? {} : { body });
      return [r.status, r.body.code];
    };
    const id = (await call(s, 'POST', '/v2/echo/batch', { body: inputs(3) })).body.id;
    expect(await code('POST', `/v2/echo/batch/${id}/requests`, inputs(2))).toEqual([429, 'batch_queue_full']);
    expect(await code('POST', `/v2/echo/batch/${id}/requests`, inputs(4))).toEqual([413, 'batch_too_many_requests']);
    await call(s, 'POST', '/v2/echo/batch', { body: [] });
    expect(await code('POST', '/v2/echo/batch', [])).toEqual([429, 'batch_limit_reached']);
    expect(await code('GET', '/v2/echo/batch/batch_nope')).toEqual([404, 'batch_not_found']);
    expect(await code('POST', `/v2/echo/batch/${id}/requests`, [{ input: 'text' }])).toEqual([400, 'invalid_request']);
    expect(await code('POST', `/v2/echo/batch/${id}/requests`, [{ input: {}, webhook: 'http://x.example/' }])).toEqual([
      400,
      'invalid_request',
    ]);
    expect(await code('PUT', `/v2/echo/batch/${id}`, { name: '' })).toEqual([400, 'invalid_request']);
    expect(await code('PATCH', `/v2/echo/batch/${id}`)).toEqual([405, 'method_not_allowed']);
    expect(await code('GET', `/v2/echo/batch/${id}/nothing`)).toEqual([404, 'route_not_found']);
    expect(await code('DELETE', `/v2/echo/batch/${id}/requests/nope-u1`)).toEqual([404, 'job_not_found']);
    await call(s, 'POST', `/v2/echo/batch/${id}/finalize`);
    expect(await code('POST', `/v2/echo/batch/${id}/finalize`)).toEqual([200, undefined]); // as it is
    const cancelled = (await call(s, 'POST', `/v2/echo/batch/${id}/cancel`)).body;
    expect(cancelled.status).toBe('CANCELLED');
    expect(await code('POST', `/v2/echo/batch/${id}/finalize`)).toEqual([409, 'batch_not_draft']);
  });

  it('fails a batch whose requests were deleted by their ttl before they ran, and deletes it after its retention', async () => {
    const clock = new ManualClock();
    await using t = await listening({ store: makeStore(), clock });
    const s = t.server;
    const id = (await call(s, 'POST', '/v2/echo/batch', { body: [{ input: {}, policy: { ttl: 10_000 } }] })).body.id;
    await call(s, 'POST', `/v2/echo/batch/${id}/finalize`);
    clock.advance(11_000);
    await s.sweep();
    const b = await summary(s, id);
    expect(b).toMatchObject({ status: 'FAILED', requestExpired: 1, requestTotal: 1, done: true });
    // An ended batch is kept for its retention (7 days), then deleted with its requests.
    clock.advance(7 * 24 * 3600_000 - 1_000);
    await s.sweep();
    expect((await call(s, 'GET', `/v2/echo/batch/${id}`)).status).toBe(200);
    clock.advance(2_000);
    await s.sweep();
    expect((await call(s, 'GET', `/v2/echo/batch/${id}`)).body.code).toBe('batch_not_found');
  });
});
