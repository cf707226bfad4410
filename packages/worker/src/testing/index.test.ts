import { describe, expect, it } from 'vitest';
import type { Job } from '../handler.js';
import { UnrecoverableError } from '../errors.js';
import { runJob } from './index.js';

describe('runJob', () => {
  it('runs a plain handler', async () => {
    const result = await runJob((job: Job<{ name: string }>) => ({ hi: job.input.name }), { name: 'ada' });
    expect(result).toEqual({ status: 'COMPLETED', output: { hi: 'ada' }, chunks: [], progress: [], logs: [] });
  });

  it('collects chunks, progress and logs of a streaming handler', async () => {
    const result = await runJob(async function* (job) {
      job.log.info('starting');
      job.progress(0.5);
      yield 'a';
      yield 'b';
      return 'ab';
    }, {});
    expect(result).toMatchObject({ status: 'COMPLETED', output: 'ab', chunks: ['a', 'b'], progress: [0.5] });
    expect(result.logs).toEqual([
      expect.objectContaining({
        level: 'info',
        msg: 'starting',
        fields: expect.objectContaining({ jobId: 'test-job' }),
      }),
    ]);
  });

  it('honours return_aggregate_stream', async () => {
    const result = await runJob(
      function* () {
        yield 1;
        return 'ignored';
      },
      {},
      { return_aggregate_stream: true },
    );
    expect(result.output).toEqual([1]);
  });

  it('reports failures and cancellation', async () => {
    expect(await runJob(() => Promise.reject(new Error('bad')), {})).toMatchObject({ status: 'FAILED', error: 'bad' });
    const ac = new AbortController();
    const pending = runJob(
      (job) => new Promise((_, reject) => job.signal.addEventListener('abort', () => reject(job.signal.reason))),
      {},
      { signal: ac.signal },
    );
    ac.abort(new Error('user cancelled'));
    expect(await pending).toMatchObject({ status: 'CANCELLED', error: 'user cancelled' });
  });

  it('applies a retry policy: retried until it works, UnrecoverableError at once; the retries are logged', async () => {
    let calls = 0;
    const flaky = () => (++calls < 3 ? Promise.reject(new Error(`flaky ${calls}`)) : 'ok');
    const result = await runJob(flaky, {}, { retry: { attempts: 3 } });
    expect(result).toMatchObject({ status: 'COMPLETED', output: 'ok' });
    expect(result.logs.filter((l) => l.msg.startsWith('handler failed; retrying')).map((l) => l.fields?.try)).toEqual([
      1, 2,
    ]);
    calls = 0;
    const final = () => {
      calls++;
      throw new UnrecoverableError('no');
    };
    expect(await runJob(final, {}, { retry: { attempts: 3 } })).toMatchObject({ status: 'FAILED', error: 'no' });
    expect(calls).toBe(1);
  });

  it('passes id and attempt', async () => {
    const result = await runJob((job) => [job.id, job.attempt], {}, { id: 'abc', attempt: 3 });
    expect(result.output).toEqual(['abc', 3]);
  });
});
