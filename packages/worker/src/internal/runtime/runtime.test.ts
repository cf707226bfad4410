import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SDK_VERSION } from '../transport/version.js';
import { startFakeControlPlane } from '../testing/fake-control-plane.test-helpers.js';
import { deferred, startTestWorker, until } from './runtime.test-helpers.js';

const assign = (id: string, input: Record<string, unknown> = {}, attempt = 1) => ({
  type: 'job.assign' as const,
  id,
  attempt,
  input,
});

describe('worker runtime: connection', () => {
  it('sends hello with the bearer token, protocol, ids, concurrency and stream flag', async () => {
    await using cp = await startFakeControlPlane();
    await using worker = startTestWorker(cp, { handler: (job) => job.input, concurrency: 2 });
    const socket = await cp.connection(0);
    expect(socket.headers.authorization).toBe('Bearer test-token');
    expect(socket.hello).toEqual({
      type: 'hello',
      protocol: 1,
      workerId: 'w-test',
      endpointId: 'echo',
      concurrency: 2,
      stream: false,
      inflight: [],
      sdkVersion: SDK_VERSION,
      blobs: true,
    });
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('j1', { hello: 'world' }));
    expect(await socket.next('job.complete')).toEqual({
      type: 'job.complete',
      id: 'j1',
      attempt: 1,
      output: { hello: 'world' },
    });
    expect(socket.invalid).toEqual([]);
  });

  it('announces stream: true for a generator handler', async () => {
    await using cp = await startFakeControlPlane();
    await using _worker = startTestWorker(cp, { handler: async function* () {} });
    expect((await cp.connection(0)).hello?.stream).toBe(true);
  });

  it('answers a server ping with a pong carrying the same t, and sends its own pings', async () => {
    await using cp = await startFakeControlPlane({ heartbeatMs: 30 });
    await using _worker = startTestWorker(cp, { handler: () => null });
    const socket = await cp.connection(0);
    socket.send({ type: 'ping', t: 1234 });
    expect(await socket.next('pong')).toEqual({ type: 'pong', t: 1234 });
    expect((await socket.next('ping')).t).toBeGreaterThan(0);
  });

  it('ignores malformed server messages and keeps working on the same connection', async () => {
    await using cp = await startFakeControlPlane();
    await using worker = startTestWorker(cp, { handler: () => 'ok' });
    const socket = await cp.connection(0);
    socket.send('not json at all');
    socket.send('{"type":"bogus"}');
    socket.send(JSON.stringify({ type: 'job.assign', id: 'j0', attempt: 1 })); // no input
    socket.send(assign('j1'));
    expect((await socket.next('job.complete')).id).toBe('j1');
    expect(cp.sockets).toHaveLength(1);
    expect(worker.logs.filter((l) => l.msg === 'ignored an invalid message from the control plane')).toHaveLength(3);
  });

  it('reconnects when the server goes silent for 3 heartbeats', async () => {
    await using cp = await startFakeControlPlane({ heartbeatMs: 40, answerPings: false });
    await using worker = startTestWorker(cp, { handler: () => null });
    const first = await cp.connection(0);
    const started = Date.now();
    await first.closed;
    await cp.connection(1, 2000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(worker.logs.some((l) => l.msg.includes('no message from the control plane for 3 heartbeats'))).toBe(true);
  });

  it('stops with exit code 1 on a protocol_mismatch error', async () => {
    await using cp = await startFakeControlPlane({
      welcome: (_hello, socket) => {
        socket.send({ type: 'error', code: 'protocol_mismatch', message: 'server speaks protocol 2' });
        return undefined;
      },
    });
    await using worker = startTestWorker(cp, { handler: () => null });
    const exit = await worker.done;
    expect(exit.code).toBe(1);
    expect(exit.reason).toContain('protocol_mismatch');
    await sleep(50);
    expect(cp.sockets).toHaveLength(1); // no reconnect loop
  });

  it('stops with exit code 1 when the upgrade answers HTTP 401 (wrong token)', async () => {
    await using cp = await startFakeControlPlane({ token: 'right' });
    await using worker = startTestWorker(cp, { handler: () => null, token: 'wrong' });
    const exit = await worker.done;
    expect(exit).toMatchObject({ code: 1, reason: expect.stringContaining('BERTH_WORKER_TOKEN') });
  });

  it('keeps retrying while the control plane refuses with 503', async () => {
    await using cp = await startFakeControlPlane();
    cp.refuseWith = 503;
    await using worker = startTestWorker(cp, { handler: () => null });
    await until(
      () => worker.logs.filter((l) => l.msg === 'could not connect to the control plane').length >= 2,
      2000,
      'retries',
    );
    cp.refuseWith = undefined;
    await cp.connection(0, 2000);
  });
});

describe('worker runtime: jobs', () => {
  it('never runs more jobs at once than the concurrency, even if the server over-assigns', async () => {
    await using cp = await startFakeControlPlane();
    let running = 0;
    let peak = 0;
    await using _worker = startTestWorker(cp, {
      concurrency: 2,
      handler: async () => {
        running++;
        peak = Math.max(peak, running);
        await sleep(15);
        running--;
        return 'done';
      },
    });
    const socket = await cp.connection(0);
    for (let i = 0; i < 6; i++) socket.send(assign(`j${i}`));
    for (let i = 0; i < 6; i++) await socket.next('job.complete', (m) => m.id === `j${i}`);
    expect(peak).toBe(2);
  });

  it('sends a concurrency message when concurrencyModifier changes it after a job', async () => {
    await using cp = await startFakeControlPlane();
    const seen: number[] = [];
    await using worker = startTestWorker(cp, {
      concurrency: 1,
      handler: () => null,
      concurrencyModifier: (current) => {
        seen.push(current);
        return Math.min(current + 1, 3);
      },
    });
    const socket = await cp.connection(0);
    for (const id of ['a', 'b', 'c']) {
      socket.send(assign(id));
      await socket.next('job.complete', (m) => m.id === id);
    }
    expect(socket.all('concurrency').map((m) => m.concurrency)).toEqual([2, 3]);
    expect(seen).toEqual([1, 2, 3]);
    expect(worker.concurrency).toBe(3);
  });

  it('streams chunks in order with seq = index of the first chunk, then completes', async () => {
    await using cp = await startFakeControlPlane();
    await using _worker = startTestWorker(cp, {
      handler: async function* () {
        yield 'a';
        yield 'b'; // same tick as 'a': may share a message
        await sleep(5);
        yield 'c';
        await sleep(5);
        yield 'd';
        yield 'e';
      },
    });
    const socket = await cp.connection(0);
    socket.send(assign('s1'));
    const done = await socket.next('job.complete');
    expect(done.output).toEqual(['a', 'b', 'c', 'd', 'e']);
    const streams = socket.all('job.stream');
    expect(streams.flatMap((m) => m.chunks)).toEqual(['a', 'b', 'c', 'd', 'e']);
    let expected = 0;
    for (const m of streams) {
      expect(m.seq).toBe(expected);
      expected += m.chunks.length;
    }
    expect(streams.length).toBeGreaterThanOrEqual(3); // chunks separated by awaits were not held back
    expect(socket.messages.findIndex((m) => m.type === 'job.complete')).toBeGreaterThan(
      socket.messages.findLastIndex((m) => m.type === 'job.stream'),
    );
  });

  it('sends progress while the job runs', async () => {
    await using cp = await startFakeControlPlane();
    const gate = deferred();
    await using _worker = startTestWorker(cp, {
      handler: async (job) => {
        job.progress({ pct: 50 });
        await gate.promise;
        return 'ok';
      },
    });
    const socket = await cp.connection(0);
    socket.send(assign('p1'));
    expect(await socket.next('job.progress')).toEqual({
      type: 'job.progress',
      id: 'p1',
      attempt: 1,
      progress: { pct: 50 },
    });
    gate.resolve();
    await socket.next('job.complete');
  });

  it('reports a thrown error and a non-serialisable output as job.fail', async () => {
    await using cp = await startFakeControlPlane();
    await using _worker = startTestWorker(cp, {
      handler: (job) => {
        if (job.input.kind === 'throw') throw new Error('model exploded');
        return { fn: () => 1 };
      },
    });
    const socket = await cp.connection(0);
    socket.send(assign('f1', { kind: 'throw' }));
    expect(await socket.next('job.fail', (m) => m.id === 'f1')).toEqual({
      type: 'job.fail',
      id: 'f1',
      attempt: 1,
      error: 'model exploded',
    });
    socket.send(assign('f2'));
    expect((await socket.next('job.fail', (m) => m.id === 'f2')).error).toBe(
      'output.fn is a function, which cannot be sent as JSON',
    );
  });
});

describe('worker runtime: cancellation', () => {
  it('job.cancel aborts the signal; the worker answers job.fail aborted and nothing else', async () => {
    await using cp = await startFakeControlPlane();
    let sawAbort = false;
    await using _worker = startTestWorker(cp, {
      handler: async function* (job) {
        yield 'first';
        await new Promise((resolve) => job.signal.addEventListener('abort', resolve));
        sawAbort = true;
        yield 'after cancel';
        return 'ignored';
      },
    });
    const socket = await cp.connection(0);
    socket.send(assign('c1'));
    await socket.next('job.stream');
    socket.send({ type: 'job.cancel', id: 'c1', attempt: 1, reason: 'cancelled' });
    const fail = await socket.next('job.fail');
    expect(fail).toEqual({
      type: 'job.fail',
      id: 'c1',
      attempt: 1,
      error: 'cancelled by the control plane (cancelled)',
      aborted: true,
    });
    expect(sawAbort).toBe(true);
    expect(socket.all('job.stream').flatMap((m) => m.chunks)).toEqual(['first']);
    expect(socket.all('job.complete')).toEqual([]);
  });

  it('waits for a handler that ignores the abort before releasing it, and drops its output', async () => {
    await using cp = await startFakeControlPlane();
    const gate = deferred();
    await using worker = startTestWorker(cp, {
      handler: async (job) => {
        await gate.promise;
        job.progress('late');
        return 'late result';
      },
    });
    const socket = await cp.connection(0);
    socket.send(assign('c2'));
    await until(() => worker.activeJobs === 1);
    socket.send({ type: 'job.cancel', id: 'c2', attempt: 1, reason: 'timed_out' });
    await sleep(20);
    expect(socket.all('job.fail')).toEqual([]); // still running: the credit stays taken
    gate.resolve();
    expect(await socket.next('job.fail')).toMatchObject({ id: 'c2', aborted: true });
    expect(socket.all('job.complete')).toEqual([]);
    expect(socket.all('job.progress')).toEqual([]);
  });

  it('releases a cancel for a job it does not know', async () => {
    await using cp = await startFakeControlPlane();
    await using _worker = startTestWorker(cp, { handler: () => null });
    const socket = await cp.connection(0);
    socket.send({ type: 'job.cancel', id: 'ghost', attempt: 3, reason: 'expired' });
    expect(await socket.next('job.fail')).toMatchObject({ id: 'ghost', attempt: 3, aborted: true });
  });
});
