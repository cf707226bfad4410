import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UnrecoverableError } from '../../errors.js';
import { startFakeControlPlane } from '../testing/fake-control-plane.test-helpers.js';
import { deferred, startTestWorker, until } from './runtime.test-helpers.js';

const assign = (id: string, extra: { input?: Record<string, unknown>; deadline?: number } = {}) => ({
  type: 'job.assign' as const,
  id,
  attempt: 1,
  input: extra.input ?? {},
  ...(extra.deadline !== undefined ? { deadline: extra.deadline } : {}),
});

describe('worker runtime: retry policy', () => {
  it('retries a throwing handler with backoff and reports only the final result; logs carry job, attempt and try', async () => {
    await using cp = await startFakeControlPlane();
    const calls: number[] = [];
    await using worker = startTestWorker(cp, {
      handler: () => {
        calls.push(Date.now());
        if (calls.length < 3) throw new Error(`flaky ${calls.length}`);
        return { ok: calls.length };
      },
      retry: { attempts: 3, backoffMs: 40 },
    });
    const socket = await cp.connection(0);
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('r1'));
    expect(await socket.next('job.complete')).toEqual({
      type: 'job.complete',
      id: 'r1',
      attempt: 1,
      output: { ok: 3 },
    });
    expect(socket.all('job.fail')).toEqual([]);
    const [t1, t2, t3] = calls as [number, number, number];
    expect(t2 - t1).toBeGreaterThanOrEqual(35); // backoffMs
    expect(t3 - t2).toBeGreaterThanOrEqual(75); // doubled
    const retries = worker.logs.filter((l) => l.msg.startsWith('handler failed; retrying'));
    expect(
      retries.map((l) => [l.fields?.jobId, l.fields?.attempt, l.fields?.try, l.fields?.of, l.fields?.error]),
    ).toEqual([
      ['r1', 1, 1, 3, 'flaky 1'],
      ['r1', 1, 2, 3, 'flaky 2'],
    ]);
    expect(retries[0]?.msg).toBe('handler failed; retrying in 40 ms');
  });

  it('fails after the last try with the last error', async () => {
    await using cp = await startFakeControlPlane();
    let calls = 0;
    await using worker = startTestWorker(cp, {
      handler: () => {
        throw new Error(`down ${++calls}`);
      },
      retry: { attempts: 2, backoffMs: 5 },
    });
    const socket = await cp.connection(0);
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('r2'));
    expect(await socket.next('job.fail')).toEqual({ type: 'job.fail', id: 'r2', attempt: 1, error: 'down 2' });
    expect(calls).toBe(2);
  });

  it('never retries an UnrecoverableError or an input the schema refuses', async () => {
    await using cp = await startFakeControlPlane();
    let calls = 0;
    await using worker = startTestWorker(cp, {
      handler: (job) => {
        calls++;
        if (job.input.bad) throw new UnrecoverableError('this input cannot work');
        return 'fine';
      },
      inputSchema: z.object({ bad: z.boolean().optional(), n: z.number().optional() }),
      retry: { attempts: 5, backoffMs: 5 },
    });
    const socket = await cp.connection(0);
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('u1', { input: { bad: true } }));
    expect(await socket.next('job.fail')).toEqual({
      type: 'job.fail',
      id: 'u1',
      attempt: 1,
      error: 'this input cannot work',
    });
    expect(calls).toBe(1);
    socket.send(assign('u2', { input: { n: 'not a number' } }));
    expect((await socket.next('job.fail')).error).toMatch(/^invalid_input: n:/);
    expect(calls).toBe(1);
    expect(worker.logs.filter((l) => l.msg.startsWith('handler failed; retrying'))).toEqual([]);
  });

  it('a cancel during the backoff stops retrying: job.fail aborted, the handler is not called again', async () => {
    await using cp = await startFakeControlPlane();
    let calls = 0;
    const failed = deferred();
    await using worker = startTestWorker(cp, {
      handler: () => {
        calls++;
        failed.resolve();
        throw new Error('flaky');
      },
      retry: { attempts: 3, backoffMs: 10_000 },
    });
    const socket = await cp.connection(0);
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('c1'));
    await failed.promise;
    await until(() => worker.logs.some((l) => l.msg.startsWith('handler failed; retrying')), 2000, 'the retry wait');
    const started = Date.now();
    socket.send({ type: 'job.cancel', id: 'c1', attempt: 1, reason: 'timed_out' });
    const fail = await socket.next('job.fail');
    expect(fail).toMatchObject({ id: 'c1', aborted: true });
    expect(Date.now() - started).toBeLessThan(2000); // not after the 10 s backoff
    await until(() => worker.activeJobs === 0, 2000, 'slot freed');
    expect(calls).toBe(1);
  });

  it('does not retry past the job deadline, nor a stream that already sent chunks', async () => {
    await using cp = await startFakeControlPlane();
    let calls = 0;
    await using worker = startTestWorker(cp, {
      handler: async function* (job) {
        calls++;
        if (job.input.stream) yield 'chunk';
        throw new Error('broken');
      },
      retry: { attempts: 3, backoffMs: 5_000 },
    });
    const socket = await cp.connection(0);
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('d1', { deadline: Date.now() + 1_000 }));
    expect(await socket.next('job.fail')).toMatchObject({ id: 'd1', error: 'broken' });
    expect(calls).toBe(1);
    socket.send(assign('s1', { input: { stream: true } }));
    expect(await socket.next('job.stream')).toMatchObject({ id: 's1', chunks: ['chunk'] });
    expect(await socket.next('job.fail')).toMatchObject({ id: 's1', error: 'broken' });
    expect(calls).toBe(2);
    expect(worker.logs.map((l) => l.msg)).toEqual(
      expect.arrayContaining([
        'handler failed; no retry before the job deadline',
        'handler failed after streaming; not retried (the chunks were sent)',
      ]),
    );
  });

  it('default: no retries (a throw fails the job at once)', async () => {
    await using cp = await startFakeControlPlane();
    let calls = 0;
    await using worker = startTestWorker(cp, {
      handler: () => {
        calls++;
        throw new Error('once');
      },
    });
    const socket = await cp.connection(0);
    await until(() => worker.connected, 2000, 'welcome');
    socket.send(assign('n1'));
    expect(await socket.next('job.fail')).toMatchObject({ id: 'n1', error: 'once' });
    expect(calls).toBe(1);
  });
});
