import { describe, expect, it } from 'vitest';
import { UnrecoverableError } from '../../errors.js';
import type { Handler } from '../../handler.js';
import { createLogger, type LogRecord } from '../../logger.js';
import { executeJob, type ExecuteOptions, type JobResult } from './execute.js';

interface Run {
  result: JobResult;
  chunks: unknown[];
  indexes: number[];
  progress: unknown[];
  logs: LogRecord[];
}

async function run(handler: Handler, over: Partial<ExecuteOptions> = {}): Promise<Run> {
  const chunks: unknown[] = [];
  const indexes: number[] = [];
  const progress: unknown[] = [];
  const logs: LogRecord[] = [];
  const result = await executeJob({
    handler,
    job: { id: 'j1', input: { n: 2 }, attempt: 1 },
    signal: new AbortController().signal,
    log: createLogger({ level: 'debug', bindings: { jobId: 'j1' }, sink: (r) => logs.push(r) }),
    returnAggregateStream: false,
    onChunk: (c, i) => {
      chunks.push(c);
      indexes.push(i);
    },
    onProgress: (v) => progress.push(v),
    ...over,
  });
  return { result, chunks, indexes, progress, logs };
}

describe('executeJob: handler kinds', () => {
  it('plain function: the return value is the output', async () => {
    const { result } = await run((job) => ({ doubled: (job.input as { n: number }).n * 2 }));
    expect(result).toEqual({ status: 'COMPLETED', output: { doubled: 4 } });
  });

  it('async function', async () => {
    const { result } = await run(async (job) => {
      await new Promise((r) => setTimeout(r, 1));
      return job.input;
    });
    expect(result).toEqual({ status: 'COMPLETED', output: { n: 2 } });
  });

  it('passes the same job object as both arguments, with id, input, attempt, signal, progress, log', async () => {
    let seen: unknown[] = [];
    await run((job, ctx) => {
      seen = [
        job === ctx,
        job.id,
        job.attempt,
        job.signal instanceof AbortSignal,
        typeof job.progress,
        typeof job.log.info,
      ];
      return null;
    });
    expect(seen).toEqual([true, 'j1', 1, true, 'function', 'function']);
  });

  it('undefined output becomes null', async () => {
    expect((await run(() => undefined)).result).toEqual({ status: 'COMPLETED', output: null });
  });

  it('arrays and strings are plain outputs, not streams', async () => {
    const r1 = await run(() => [1, 2, 3]);
    expect(r1.result).toEqual({ status: 'COMPLETED', output: [1, 2, 3] });
    expect(r1.chunks).toEqual([]);
    expect((await run(() => 'abc')).result).toEqual({ status: 'COMPLETED', output: 'abc' });
  });

  it('generator function: chunks in order, output = chunks when it returns nothing', async () => {
    const r = await run(function* () {
      yield 'a';
      yield { b: 1 };
      yield 3;
    });
    expect(r.chunks).toEqual(['a', { b: 1 }, 3]);
    expect(r.indexes).toEqual([0, 1, 2]);
    expect(r.result).toEqual({ status: 'COMPLETED', output: ['a', { b: 1 }, 3] });
  });

  it('async generator function: output is the return value when there is one', async () => {
    const r = await run(async function* () {
      yield 1;
      await new Promise((res) => setTimeout(res, 1));
      yield 2;
      return { total: 2 };
    });
    expect(r.chunks).toEqual([1, 2]);
    expect(r.result).toEqual({ status: 'COMPLETED', output: { total: 2 } });
  });

  it('return_aggregate_stream: output is the chunk list even when the generator returns a value', async () => {
    const r = await run(
      async function* () {
        yield 'x';
        yield 'y';
        return 'ignored';
      },
      { returnAggregateStream: true },
    );
    expect(r.result).toEqual({ status: 'COMPLETED', output: ['x', 'y'] });
  });

  it('a plain function returning an iterator or async iterable streams', async () => {
    function* gen() {
      yield 1;
      yield 2;
    }
    expect((await run(() => gen())).chunks).toEqual([1, 2]);
    const asyncIterable = {
      async *[Symbol.asyncIterator]() {
        yield 'p';
        yield 'q';
      },
    };
    const r = await run(async () => asyncIterable);
    expect(r.chunks).toEqual(['p', 'q']);
    expect(r.result).toEqual({ status: 'COMPLETED', output: ['p', 'q'] });
  });

  it('awaits promises yielded by a sync generator, like for await', async () => {
    const r = await run(function* () {
      yield Promise.resolve('later');
    });
    expect(r.chunks).toEqual(['later']);
  });

  it('reports progress values in order', async () => {
    const r = await run(async (job) => {
      job.progress({ pct: 10 });
      job.progress('halfway');
      return 'done';
    });
    expect(r.progress).toEqual([{ pct: 10 }, 'halfway']);
  });

  it('ignores progress after the handler returned', async () => {
    let late: ((v: unknown) => void) | undefined;
    const r = await run((job) => {
      late = (v) => job.progress(v);
      return 1;
    });
    late?.('too late');
    expect(r.progress).toEqual([]);
  });

  it('tags handler log lines with the job id', async () => {
    const r = await run((job) => {
      job.log.info('hello', { a: 1 });
      return 1;
    });
    expect(r.logs).toContainEqual(
      expect.objectContaining({ level: 'info', msg: 'hello', fields: { jobId: 'j1', a: 1 } }),
    );
  });
});

describe('executeJob: errors', () => {
  it('an Error becomes its message', async () => {
    const r = await run(() => {
      throw new Error('bad input');
    });
    expect(r.result).toEqual({ status: 'FAILED', error: 'bad input', unrecoverable: false });
    expect(r.logs.some((l) => l.level === 'error' && l.msg === 'handler failed')).toBe(true);
  });

  it('built-in error kinds keep their name', async () => {
    const r = await run(async () => {
      throw new TypeError('x is not a function');
    });
    expect(r.result).toMatchObject({ status: 'FAILED', error: 'TypeError: x is not a function' });
  });

  it('non-Error throws are JSON-stringified; strings stay as they are', async () => {
    expect((await run(() => Promise.reject({ code: 7 }))).result).toMatchObject({ error: '{"code":7}' });
    expect((await run(() => Promise.reject('plain'))).result).toMatchObject({ error: 'plain' });
  });

  it('UnrecoverableError is marked unrecoverable', async () => {
    const r = await run(() => {
      throw new UnrecoverableError('never retry');
    });
    expect(r.result).toEqual({ status: 'FAILED', error: 'never retry', unrecoverable: true });
  });

  it('a generator that throws mid-stream fails after its earlier chunks', async () => {
    const r = await run(async function* () {
      yield 1;
      throw new Error('mid-stream');
    });
    expect(r.chunks).toEqual([1]);
    expect(r.result).toMatchObject({ status: 'FAILED', error: 'mid-stream' });
  });

  it('non-serialisable output fails with the path of the bad value', async () => {
    const r = await run(() => ({ a: { f: () => 1 } }));
    expect(r.result).toMatchObject({
      status: 'FAILED',
      error: 'output.a.f is a function, which cannot be sent as JSON',
    });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect((await run(() => cyclic)).result).toMatchObject({
      error: expect.stringContaining('output.self is a circular reference'),
    });
    expect((await run(() => 10n)).result).toMatchObject({ error: expect.stringContaining('output is a BigInt') });
  });

  it('a non-serialisable stream chunk fails the job and closes the generator', async () => {
    let cleanedUp = false;
    const r = await run(function* () {
      try {
        yield 'ok';
        yield new Map();
        yield 'never';
      } finally {
        cleanedUp = true;
      }
    });
    expect(r.chunks).toEqual(['ok']);
    expect(r.result).toMatchObject({ status: 'FAILED', error: expect.stringContaining('stream chunk 1 is a Map') });
    expect(cleanedUp).toBe(true);
  });

  it('progress with a non-serialisable value throws in the handler', async () => {
    const r = await run((job) => {
      job.progress(() => 1);
      return 1;
    });
    expect(r.result).toMatchObject({ status: 'FAILED', error: expect.stringContaining('progress is a function') });
  });
});

describe('executeJob: cancellation', () => {
  it('an aborted signal makes the result CANCELLED even when the handler returns normally', async () => {
    const ac = new AbortController();
    const r = await run(
      async (job) => {
        ac.abort(new Error('cancelled by test'));
        expect(job.signal.aborted).toBe(true);
        return 'finished anyway';
      },
      { signal: ac.signal },
    );
    expect(r.result).toEqual({ status: 'CANCELLED', error: 'cancelled by test' });
  });

  it('a handler that rejects because of the abort is CANCELLED, not FAILED', async () => {
    const ac = new AbortController();
    const promise = run(
      (job) =>
        new Promise((_resolve, reject) => {
          job.signal.addEventListener('abort', () => reject(new Error('AbortError')));
        }),
      { signal: ac.signal },
    );
    ac.abort();
    expect((await promise).result).toMatchObject({ status: 'CANCELLED' });
  });

  it('a streaming handler stops being pulled after abort and its finally block runs', async () => {
    const ac = new AbortController();
    let pulled = 0;
    let closed = false;
    const r = await run(
      async function* () {
        try {
          for (;;) {
            pulled++;
            if (pulled === 3) ac.abort();
            yield pulled;
          }
        } finally {
          closed = true;
        }
      },
      { signal: ac.signal },
    );
    expect(r.result.status).toBe('CANCELLED');
    expect(r.chunks).toEqual([1, 2]);
    expect(closed).toBe(true);
    expect(pulled).toBe(3);
  });

  it('does not call the handler when the signal is already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    let called = false;
    const r = await run(
      () => {
        called = true;
      },
      { signal: ac.signal },
    );
    expect(called).toBe(false);
    expect(r.result.status).toBe('CANCELLED');
  });

  it('a long sync generator yields to the event loop so a cancel can land between chunks', async () => {
    const ac = new AbortController();
    setImmediate(() => ac.abort());
    const r = await run(
      function* () {
        for (let i = 0; i < 1000; i++) yield i;
      },
      { signal: ac.signal },
    );
    expect(r.result.status).toBe('CANCELLED');
    expect(r.chunks.length).toBeLessThan(1000);
  });
});
