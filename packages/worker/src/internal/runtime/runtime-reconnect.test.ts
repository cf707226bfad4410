import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startFakeControlPlane } from '../testing/fake-control-plane.test-helpers.js';
import { deferred, startTestWorker, until } from './runtime.test-helpers.js';

const assign = (id: string, input: Record<string, unknown> = {}, attempt = 1) => ({
  type: 'job.assign' as const,
  id,
  attempt,
  input,
});

describe('worker runtime: reconnect', () => {
  it('keeps jobs running while disconnected, re-announces them in hello.inflight and flushes buffered results', async () => {
    await using cp = await startFakeControlPlane();
    const gates = { j1: deferred(), j2: deferred() };
    await using worker = startTestWorker(cp, {
      concurrency: 2,
      handler: async function* (job) {
        const gate = gates[job.id as keyof typeof gates];
        yield `${job.id} before`;
        await gate.promise;
        job.progress('almost');
        yield `${job.id} after`;
        return `${job.id} done`;
      },
    });
    const first = await cp.connection(0);
    first.send(assign('j1'));
    first.send(assign('j2'));
    await first.next('job.stream', (m) => m.id === 'j1');
    await first.next('job.stream', (m) => m.id === 'j2');

    cp.refuseWith = 503;
    first.ws.terminate();
    await until(() => !worker.connected, 2000, 'disconnect');
    gates.j1.resolve(); // j1 finishes while disconnected: its results are buffered
    await until(() => worker.activeJobs === 1, 2000, 'j1 to finish');

    cp.refuseWith = undefined;
    const second = await cp.connection(1, 3000);
    expect(second.hello?.inflight).toEqual([
      { id: 'j1', attempt: 1 },
      { id: 'j2', attempt: 1 },
    ]);
    expect(await second.next('job.stream', (m) => m.id === 'j1')).toMatchObject({ seq: 1, chunks: ['j1 after'] });
    expect(await second.next('job.progress', (m) => m.id === 'j1')).toMatchObject({ progress: 'almost' });
    expect(await second.next('job.complete', (m) => m.id === 'j1')).toMatchObject({ output: 'j1 done' });

    gates.j2.resolve(); // j2 finishes after the reconnect: reported on the new socket
    expect(await second.next('job.stream', (m) => m.id === 'j2')).toMatchObject({ seq: 1, chunks: ['j2 after'] });
    expect(await second.next('job.complete', (m) => m.id === 'j2')).toMatchObject({ output: 'j2 done' });
    expect(first.all('job.complete')).toEqual([]);
    expect([...first.invalid, ...second.invalid]).toEqual([]);
  });

  it('aborts jobs the welcome lists as stale and drops their buffered results', async () => {
    await using cp = await startFakeControlPlane({ welcome: (hello) => ({ stale: hello.inflight }) });
    const aborted: string[] = [];
    const gate = deferred();
    await using worker = startTestWorker(cp, {
      concurrency: 2,
      handler: async (job) => {
        if (job.id === 'quick') {
          await gate.promise;
          return 'quick result';
        }
        await new Promise((resolve) => job.signal.addEventListener('abort', resolve));
        aborted.push(job.id);
        return 'never sent';
      },
    });
    const first = await cp.connection(0);
    first.send(assign('long', {}, 2));
    first.send(assign('quick'));
    await until(() => worker.activeJobs === 2);
    cp.refuseWith = 503;
    first.ws.terminate();
    await until(() => !worker.connected);
    gate.resolve();
    await until(() => worker.activeJobs === 1, 2000, 'quick to finish');
    cp.refuseWith = undefined;

    const second = await cp.connection(1, 3000);
    expect(second.hello?.inflight).toEqual([
      { id: 'long', attempt: 2 },
      { id: 'quick', attempt: 1 },
    ]);
    expect(await second.next('job.fail', (m) => m.id === 'long')).toMatchObject({
      attempt: 2,
      aborted: true,
      error: expect.stringContaining('stale'),
    });
    expect(await second.next('job.fail', (m) => m.id === 'quick')).toMatchObject({ aborted: true });
    expect(aborted).toEqual(['long']);
    expect(second.all('job.complete')).toEqual([]);
  });
});

describe('worker runtime: result acknowledgements', () => {
  it('keeps a result until the server acknowledges it, and sends it again on the next connection', async () => {
    await using cp = await startFakeControlPlane({ welcome: () => ({ acks: true }) });
    await using worker = startTestWorker(cp, { handler: (job) => `done ${job.id}` });
    const first = await cp.connection(0);
    first.send(assign('j1'));
    expect(await first.next('job.complete', (m) => m.id === 'j1')).toMatchObject({ output: 'done j1' });
    // No ack: the result may have died with the socket (a control plane killed before its commit).
    first.ws.terminate();
    const second = await cp.connection(1, 3000);
    expect(second.hello?.inflight).toEqual([{ id: 'j1', attempt: 1 }]);
    expect(await second.next('job.complete', (m) => m.id === 'j1')).toMatchObject({ output: 'done j1' });
    second.send({ type: 'job.ack', id: 'j1', attempt: 1 });
    await sleep(50);
    second.ws.terminate();
    const third = await cp.connection(2, 3000);
    expect(third.hello?.inflight).toEqual([]); // acknowledged: forgotten
    expect(third.all('job.complete')).toEqual([]);
    expect(worker.activeJobs).toBe(0);
  });

  it('forgets a sent result the welcome reports as stale (the server stored it before the reconnect)', async () => {
    let stale = false;
    await using cp = await startFakeControlPlane({
      welcome: (hello) => ({ acks: true, stale: stale ? hello.inflight : [] }),
    });
    await using _worker = startTestWorker(cp, { handler: () => 'out' });
    const first = await cp.connection(0);
    first.send(assign('j1'));
    await first.next('job.complete');
    stale = true;
    first.ws.terminate();
    const second = await cp.connection(1, 3000);
    expect(second.hello?.inflight).toEqual([{ id: 'j1', attempt: 1 }]);
    await sleep(100);
    expect(second.all('job.complete')).toEqual([]);
    expect(second.all('job.fail')).toEqual([]);
    second.ws.terminate();
    const third = await cp.connection(2, 3000);
    expect(third.hello?.inflight).toEqual([]);
  });
});

describe('worker runtime: drain', () => {
  it('server drain: finishes running jobs, reports them, then reconnects', async () => {
    await using cp = await startFakeControlPlane();
    const gate = deferred();
    await using _worker = startTestWorker(cp, {
      handler: async () => {
        await gate.promise;
        return 'finished during drain';
      },
    });
    const first = await cp.connection(0);
    first.send(assign('d1'));
    await sleep(10);
    first.send({ type: 'drain', deadline: Date.now() + 5000 });
    await sleep(20);
    expect(cp.sockets).toHaveLength(1); // still connected while the job runs
    gate.resolve();
    expect(await first.next('job.complete')).toMatchObject({ id: 'd1', output: 'finished during drain' });
    expect(await first.closed).toEqual({ code: 1000, reason: 'control plane draining' });
    const second = await cp.connection(1, 3000);
    expect(second.hello?.inflight).toEqual([]);
  });

  it('server drain deadline: reconnects with the job still running and reports it afterwards', async () => {
    await using cp = await startFakeControlPlane();
    const gate = deferred();
    await using _worker = startTestWorker(cp, {
      handler: async () => {
        await gate.promise;
        return 'late';
      },
    });
    const first = await cp.connection(0);
    first.send(assign('d2'));
    await sleep(10);
    first.send({ type: 'drain', deadline: Date.now() + 30 });
    const second = await cp.connection(1, 3000);
    expect(second.hello?.inflight).toEqual([{ id: 'd2', attempt: 1 }]);
    gate.resolve();
    expect(await second.next('job.complete')).toMatchObject({ id: 'd2', output: 'late' });
  });

  it('shutdown: sends draining, lets running jobs finish, closes the socket, exit code 0', async () => {
    await using cp = await startFakeControlPlane();
    const gate = deferred();
    await using worker = startTestWorker(cp, {
      handler: async () => {
        await gate.promise;
        return 'done';
      },
    });
    const socket = await cp.connection(0);
    socket.send(assign('s1'));
    await until(() => worker.activeJobs === 1);
    const exit = worker.shutdown({ timeoutMs: 5000 });
    await socket.next('draining');
    gate.resolve();
    expect(await socket.next('job.complete')).toMatchObject({ id: 's1', output: 'done' });
    expect(await exit).toEqual({ code: 0, reason: 'drained' });
    expect((await socket.closed).code).toBe(1000);
  });

  it('shutdown deadline: aborts what is still running and reports it as aborted', async () => {
    await using cp = await startFakeControlPlane();
    let sawAbort = false;
    const release = deferred();
    await using worker = startTestWorker(cp, {
      abortGraceMs: 50,
      handler: async (job) => {
        job.signal.addEventListener('abort', () => (sawAbort = true));
        await release.promise; // ignores the signal
        return 'never';
      },
    });
    const socket = await cp.connection(0);
    socket.send(assign('s2'));
    await until(() => worker.activeJobs === 1);
    const started = Date.now();
    expect(await worker.shutdown({ timeoutMs: 50 })).toEqual({ code: 0, reason: 'drained' });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(sawAbort).toBe(true);
    expect(socket.all('job.fail')).toEqual([
      { type: 'job.fail', id: 's2', attempt: 1, error: 'the worker is shutting down', aborted: true },
    ]);
    release.resolve();
  });

  it('shutdown deadline: hands running jobs back at once, not after the handler returns', async () => {
    await using cp = await startFakeControlPlane();
    const release = deferred();
    await using worker = startTestWorker(cp, {
      abortGraceMs: 5_000,
      handler: async () => {
        await release.promise; // ignores the signal for longer than the grace
        return 'never';
      },
    });
    const socket = await cp.connection(0);
    socket.send(assign('s3'));
    await until(() => worker.activeJobs === 1);
    const started = Date.now();
    void worker.shutdown({ timeoutMs: 100 });
    expect(await socket.next('job.fail')).toEqual({
      type: 'job.fail',
      id: 's3',
      attempt: 1,
      error: 'the worker is shutting down',
      aborted: true,
    });
    const handedBackMs = Date.now() - started;
    expect(handedBackMs).toBeLessThan(1_500); // was deadline + abortGraceMs (5.1 s)
    release.resolve();
  });
});
