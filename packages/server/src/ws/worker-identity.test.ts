import { describe, expect, it } from 'vitest';
import { ScriptedWorker, call, listening, until, untilStatus } from '../testing.test-helpers.js';

// Issue #16 items 1 and 2: a worker's reports count only for the job attempts its own session holds, and a hello
// reusing a live worker id from another endpoint or credential is refused without disturbing the real worker.
describe('worker identity', () => {
  it('results, failures, progress and chunks about a job another worker holds are not applied', async () => {
    await using t = await listening({ endpoints: ['echo', 'other'] });
    const w1 = await ScriptedWorker.connect(t.url, { workerId: 'w1' });
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    expect((await w1.next('job.assign')).id).toBe(id);
    const intruder = await ScriptedWorker.connect(t.url, { workerId: 'x1', endpointId: 'other' });
    await intruder.next('welcome');
    intruder.send({ type: 'job.progress', id, attempt: 1, progress: 'forged' });
    intruder.send({ type: 'job.stream', id, attempt: 1, seq: 0, chunks: ['forged'] });
    intruder.send({ type: 'job.fail', id, attempt: 1, error: 'forged', aborted: true });
    intruder.send({ type: 'job.complete', id, attempt: 1, output: 'forged' });
    expect(await intruder.next('job.ack')).toEqual({ type: 'job.ack', id, attempt: 1 }); // acknowledged, not applied
    expect(await intruder.next('job.ack')).toEqual({ type: 'job.ack', id, attempt: 1 });
    const rec = await t.server.options.store.get(id);
    expect(rec).toMatchObject({ status: 'IN_PROGRESS', attempt: 1, workerId: 'w1' });
    expect(rec?.progress).toBeUndefined();
    expect(await t.server.options.store.takeStream(id)).toEqual([]);
    w1.send({ type: 'job.complete', id, attempt: 1, output: 'real' });
    expect((await untilStatus(t.server, 'echo', id, 'COMPLETED')).output).toBe('real');
    await intruder.close();
    await w1.close();
  });

  it('a worker of the same endpoint cannot finish the new attempt of a job reassigned away from it', async () => {
    await using t = await listening({ workerGraceMs: 0 });
    const w1 = await ScriptedWorker.connect(t.url, { workerId: 'w1' });
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    await w1.next('job.assign');
    w1.ws.terminate();
    await until(() => w1.closed);
    const w2 = await ScriptedWorker.connect(t.url, { workerId: 'w2' });
    expect(await w2.next('job.assign')).toMatchObject({ id, attempt: 2 });
    const w3 = await ScriptedWorker.connect(t.url, { workerId: 'w3' });
    await w3.next('welcome');
    w3.send({ type: 'job.complete', id, attempt: 2, output: 'not mine' });
    await w3.next('job.ack');
    expect((await t.server.options.store.get(id))?.status).toBe('IN_PROGRESS');
    w2.send({ type: 'job.complete', id, attempt: 2, output: 'mine' });
    expect((await untilStatus(t.server, 'echo', id, 'COMPLETED')).output).toBe('mine');
    await w2.close();
    await w3.close();
  });

  it('a hello reusing a live worker id from another endpoint is refused; the real worker keeps its connection and job', async () => {
    await using t = await listening({ endpoints: ['echo', 'other'] });
    const w1 = await ScriptedWorker.connect(t.url, { workerId: 'w1' });
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    await w1.next('job.assign');
    const intruder = await ScriptedWorker.connect(t.url, {
      workerId: 'w1',
      endpointId: 'other',
      inflight: [{ id, attempt: 1 }],
    });
    expect(await intruder.next('error')).toMatchObject({ code: 'duplicate_worker' });
    await until(() => intruder.closed);
    expect(w1.closed).toBe(false);
    expect(await t.server.options.store.get(id)).toMatchObject({ status: 'IN_PROGRESS', workerId: 'w1' });
    w1.send({ type: 'job.complete', id, attempt: 1, output: 'real' });
    expect((await untilStatus(t.server, 'echo', id, 'COMPLETED')).output).toBe('real');
    await w1.close();
  });

  it('a hello reusing a live worker id with another credential is refused, the same credential replaces it', async () => {
    await using t = await listening({ workerTokens: ['token-a', 'token-b'] });
    const w1 = await ScriptedWorker.connect(t.url, { workerId: 'w1' }, 'token-a');
    await w1.next('welcome');
    const other = await ScriptedWorker.connect(t.url, { workerId: 'w1' }, 'token-b');
    expect(await other.next('error')).toMatchObject({ code: 'duplicate_worker' });
    expect(w1.closed).toBe(false);
    const again = await ScriptedWorker.connect(t.url, { workerId: 'w1' }, 'token-a'); // the worker itself, reconnecting
    await again.next('welcome');
    await until(() => w1.closed, 2000, 'the older connection to be dropped');
    await again.close();
  });

  it('a reconnecting worker adopts (or requeues) only jobs of its own endpoint assigned to its id', async () => {
    await using t = await listening({ endpoints: ['echo', 'other'], workerGraceMs: 60_000 });
    const w1 = await ScriptedWorker.connect(t.url, { workerId: 'w1' });
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id;
    await w1.next('job.assign');
    await w1.close(); // its job keeps a lease for its return
    const intruder = await ScriptedWorker.connect(t.url, {
      workerId: 'w1',
      endpointId: 'other',
      inflight: [{ id, attempt: 1 }],
    });
    expect((await intruder.next('welcome')).stale).toEqual([{ id, attempt: 1 }]);
    intruder.send({ type: 'job.complete', id, attempt: 1, output: 'forged' });
    await intruder.next('job.ack');
    expect(await t.server.options.store.get(id)).toMatchObject({ status: 'IN_PROGRESS', attempt: 1, workerId: 'w1' }); // not adopted, not requeued
    await intruder.close();
    const back = await ScriptedWorker.connect(t.url, { workerId: 'w1', inflight: [{ id, attempt: 1 }] });
    expect((await back.next('welcome')).stale).toEqual([]);
    back.send({ type: 'job.complete', id, attempt: 1, output: 'real' });
    expect((await untilStatus(t.server, 'echo', id, 'COMPLETED')).output).toBe('real');
    await back.close();
  });
});
