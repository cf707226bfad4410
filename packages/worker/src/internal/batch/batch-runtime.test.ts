import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Job } from '../../handler.js';
import { resolveStartOptions, type BatchStartOptions } from '../../options.js';
import { deferred, startTestWorker, until } from '../runtime/runtime.test-helpers.js';
import { startFakeControlPlane, type FakeControlPlane } from '../testing/fake-control-plane.test-helpers.js';

const assign = (id: string, input: Record<string, unknown> = {}, attempt = 1) => ({
  type: 'job.assign' as const,
  id,
  attempt,
  input,
});

/** A worker runtime with a batch handler, options resolved as `start()` resolves them. */
function batchWorker(cp: FakeControlPlane, start: BatchStartOptions) {
  const r = resolveStartOptions(start as never, {});
  return startTestWorker(cp, {
    handler: r.handler,
    batcher: r.batcher,
    concurrency: r.concurrency,
    stream: r.stream,
    inputSchema: r.inputSchema,
    retry: r.retry,
    returnAggregateStream: r.returnAggregateStream,
  });
}

/** A batch handler that records each batch's job ids and holds every batch until `release()`. */
function gatedHandler(outputs: (jobs: Job[]) => unknown[] = (jobs) => jobs.map((j) => ({ id: j.id }))) {
  const batches: string[][] = [];
  let gate = deferred();
  return {
    batches,
    release() {
      const g = gate;
      gate = deferred();
      g.resolve();
    },
    handler: async (jobs: Job[]) => {
      batches.push(jobs.map((j) => j.id));
      await gate.promise;
      return outputs(jobs);
    },
  };
}

describe('batch handler in the worker runtime', () => {
  it('announces batch.maxSize, runs a lone job at once (no wait when idle) and reports each batch size', async () => {
    await using cp = await startFakeControlPlane();
    const seen: number[] = [];
    // A wait of a minute: if a lone job on an idle worker waited, the test would time out.
    await using worker = batchWorker(cp, {
      batch: { maxSize: 4, maxWaitMs: 60_000 },
      handler: (jobs) => {
        seen.push(jobs.length);
        return jobs.map((j) => ({ doubled: (j.input.n as number) * 2 }));
      },
    });
    const socket = await cp.connection(0);
    expect(socket.hello).toMatchObject({ concurrency: 4, batch: { maxSize: 4 }, stream: false });
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('a', { n: 1 }));
    expect(await socket.next('job.complete', (m) => m.id === 'a', 2000)).toMatchObject({ output: { doubled: 2 } });
    socket.send(assign('b', { n: 2 }));
    expect(await socket.next('job.complete', (m) => m.id === 'b', 2000)).toMatchObject({ output: { doubled: 4 } });
    expect(seen).toEqual([1, 1]);
    expect(socket.all('batch').map((m) => m.size)).toEqual([1, 1]);
    expect(socket.invalid).toEqual([]);
  });

  it('under load, the jobs that arrive while a batch runs form the next batch, up to maxSize', async () => {
    await using cp = await startFakeControlPlane();
    const g = gatedHandler();
    await using worker = batchWorker(cp, { batch: { maxSize: 3, maxWaitMs: 20 }, handler: g.handler, concurrency: 8 });
    const socket = await cp.connection(0);
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('j1'));
    await until(() => g.batches.length === 1, 2000, 'first batch');
    for (const id of ['j2', 'j3', 'j4', 'j5']) socket.send(assign(id));
    await until(() => worker.activeJobs === 5, 2000, 'assigns');
    g.release();
    // j2-j4 fill the next batch; j5 follows it (after the wait under load, which tests of Batcher time).
    await until(() => g.batches.length === 2, 2000, 'second batch');
    g.release();
    await until(() => g.batches.length === 3, 2000, 'third batch');
    g.release();
    for (const id of ['j1', 'j2', 'j3', 'j4', 'j5'])
      expect(await socket.next('job.complete', (m) => m.id === id)).toMatchObject({ output: { id } });
    expect(g.batches).toEqual([['j1'], ['j2', 'j3', 'j4'], ['j5']]);
    expect(socket.all('batch').map((m) => m.size)).toEqual([1, 3, 1]);
  });

  it('a refused input, an Error in a slot and a throw each fail only their jobs', async () => {
    await using cp = await startFakeControlPlane();
    const g = gatedHandler((jobs) => jobs.map((j) => (j.input.n === 3 ? new Error('odd one out') : j.input.n)));
    await using worker = batchWorker(cp, {
      batch: { maxSize: 8, maxWaitMs: 0 },
      inputSchema: z.object({ n: z.number() }),
      handler: g.handler,
    });
    const socket = await cp.connection(0);
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('first', { n: 0 }));
    await until(() => g.batches.length === 1, 2000, 'first batch');
    socket.send(assign('bad', { n: 'two' }));
    socket.send(assign('ok', { n: 1 }));
    socket.send(assign('slot-error', { n: 3 }));
    expect(await socket.next('job.fail', (m) => m.id === 'bad')).toMatchObject({
      error: expect.stringMatching(/^invalid_input: n: /),
    });
    await until(() => worker.activeJobs === 3, 2000, 'assigns');
    g.release();
    await until(() => g.batches.length === 2, 2000, 'second batch');
    g.release();
    expect(g.batches[1]).toEqual(['ok', 'slot-error']); // the refused input never joined
    expect(await socket.next('job.complete', (m) => m.id === 'ok')).toMatchObject({ output: 1 });
    expect(await socket.next('job.fail', (m) => m.id === 'slot-error')).toMatchObject({ error: 'odd one out' });
    expect(socket.all('job.fail').find((m) => m.id === 'slot-error')?.aborted).toBeUndefined();
  });

  it('a throw fails every job of that batch and no other', async () => {
    await using cp = await startFakeControlPlane();
    let calls = 0;
    await using worker = batchWorker(cp, {
      batch: { maxSize: 2, maxWaitMs: 0 },
      handler: (jobs) => {
        if (++calls === 1) throw new Error('out of memory');
        return jobs.map(() => 'fine');
      },
    });
    const socket = await cp.connection(0);
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('x1'));
    expect(await socket.next('job.fail', (m) => m.id === 'x1')).toMatchObject({ error: 'out of memory' });
    socket.send(assign('x2'));
    expect(await socket.next('job.complete', (m) => m.id === 'x2')).toMatchObject({ output: 'fine' });
  });

  it('returning the wrong number of outputs fails the batch with a clear error', async () => {
    await using cp = await startFakeControlPlane();
    await using worker = batchWorker(cp, { batch: { maxSize: 2 }, handler: () => [] });
    const socket = await cp.connection(0);
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('short'));
    expect((await socket.next('job.fail')).error).toBe(
      'TypeError: the batch handler must return an array of 1 outputs, one per job in order (got an array of length 0)',
    );
  });

  it('a cancel removes a forming job from its batch and ends a running one at once, firing its own signal', async () => {
    await using cp = await startFakeControlPlane();
    const aborted: string[] = [];
    const g = gatedHandler();
    const handler = async (jobs: Job[]) => {
      for (const j of jobs) j.signal.addEventListener('abort', () => aborted.push(j.id));
      return g.handler(jobs);
    };
    await using worker = batchWorker(cp, { batch: { maxSize: 4, maxWaitMs: 0 }, handler });
    const socket = await cp.connection(0);
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('r1'));
    socket.send(assign('r2'));
    await until(() => g.batches.length === 1, 2000, 'first batch');
    const running = g.batches[0] as string[];
    const [cancelRunning, keepRunning] = running.length === 2 ? ['r2', 'r1'] : ['r1', undefined];
    socket.send(assign('f1'));
    socket.send(assign('f2'));
    await until(() => worker.activeJobs === 4, 2000, 'assigns');
    socket.send({ type: 'job.cancel', id: 'f1', attempt: 1, reason: 'cancelled' });
    socket.send({ type: 'job.cancel', id: cancelRunning, attempt: 1, reason: 'timed_out' });
    // Both answer before the running batch ends.
    expect(await socket.next('job.fail', (m) => m.id === 'f1')).toMatchObject({ aborted: true });
    expect(await socket.next('job.fail', (m) => m.id === cancelRunning)).toMatchObject({
      aborted: true,
      error: 'cancelled by the control plane (timed_out)',
    });
    expect(aborted).toEqual([cancelRunning]);
    g.release();
    if (keepRunning) expect(await socket.next('job.complete', (m) => m.id === keepRunning)).toBeTruthy();
    await until(() => g.batches.length >= 2, 2000, 'next batch');
    g.release();
    expect(await socket.next('job.complete', (m) => m.id === 'f2')).toMatchObject({ output: { id: 'f2' } });
    expect(g.batches.flat()).not.toContain('f1');
    expect(socket.all('job.complete').map((m) => m.id)).not.toContain(cancelRunning);
  });

  it('retries a job whose slot failed, alone, in a later batch; progress and logs stay per job', async () => {
    await using cp = await startFakeControlPlane();
    const sizes: number[] = [];
    let failedOnce = false;
    await using worker = batchWorker(cp, {
      batch: { maxSize: 4, maxWaitMs: 0 },
      retry: { attempts: 2, backoffMs: 0 },
      handler: async (jobs) => {
        sizes.push(jobs.length);
        return jobs.map((j) => {
          j.progress({ of: j.id });
          j.log.info('scored', { n: j.input.n });
          if (j.id === 'flaky' && !failedOnce) return ((failedOnce = true), new Error('transient'));
          return { n: j.input.n };
        });
      },
    });
    const socket = await cp.connection(0);
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('steady', { n: 1 }));
    socket.send(assign('flaky', { n: 2 }));
    expect(await socket.next('job.complete', (m) => m.id === 'flaky')).toMatchObject({ output: { n: 2 } });
    expect(await socket.next('job.complete', (m) => m.id === 'steady')).toMatchObject({ output: { n: 1 } });
    expect(sizes.at(-1)).toBe(1); // the retry ran alone
    expect(socket.all('job.progress').filter((m) => m.id === 'steady')).toEqual([
      { type: 'job.progress', id: 'steady', attempt: 1, progress: { of: 'steady' } },
    ]);
    const logged = socket.all('job.log').flatMap((m) => m.lines.map((l) => `${m.id}:${l.msg}`));
    expect(logged.filter((l) => l === 'steady:scored')).toHaveLength(1);
    expect(logged.filter((l) => l === 'flaky:scored')).toHaveLength(2);
  });

  it('a streaming batch handler delivers each job its own chunks in order', async () => {
    await using cp = await startFakeControlPlane();
    const g = gatedHandler();
    let calls = 0;
    await using worker = batchWorker(cp, {
      batch: { maxSize: 3, maxWaitMs: 0 },
      handler: async function* (jobs) {
        if (calls++ === 0) {
          await g.handler(jobs); // hold the first batch so the next three form one
          return;
        }
        for (let step = 0; step < 3; step++) {
          for (const [index, job] of jobs.entries()) yield { index, chunk: `${job.input.word}-${step}` };
          await new Promise((r) => setImmediate(r));
        }
      },
    });
    const socket = await cp.connection(0);
    expect(socket.hello?.stream).toBe(true);
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('hold', { word: 'h' }));
    await until(() => g.batches.length === 1, 2000, 'first batch');
    for (const w of ['a', 'b', 'c']) socket.send(assign(w, { word: w }));
    await until(() => worker.activeJobs === 4, 2000, 'assigns');
    g.release();
    for (const w of ['a', 'b', 'c']) {
      const done = await socket.next('job.complete', (m) => m.id === w);
      const chunks = socket
        .all('job.stream')
        .filter((m) => m.id === w)
        .flatMap((m) => m.chunks);
      expect(chunks).toEqual([`${w}-0`, `${w}-1`, `${w}-2`]);
      expect(done.output).toEqual(chunks); // no outputs returned: each job's output is its chunks
    }
    expect(socket.all('batch').map((m) => m.size)).toEqual([1, 3]);
  });
});
