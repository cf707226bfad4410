import { describe, expect, it } from 'vitest';
import { ConfigError, resolveStartOptions, workerSocketUrl } from './options.js';

const handler = (): null => null;
const env = { BERTH_URL: 'http://127.0.0.1:8080', BERTH_ENDPOINT_ID: 'echo', BERTH_WORKER_TOKEN: 't0k' };

describe('resolveStartOptions', () => {
  it('applies defaults; no BERTH_URL means local mode', () => {
    const r = resolveStartOptions({ handler }, {});
    expect(r).toMatchObject({
      concurrency: 1,
      returnAggregateStream: false,
      stream: false,
      drainTimeoutMs: 30_000,
      logLevel: 'info',
      connection: undefined,
    });
    expect(r.workerId).toMatch(/^[A-Za-z0-9._:-]+-\d+-[0-9a-f]{4}$/);
  });

  it('reads the connection from the environment', () => {
    const r = resolveStartOptions({ handler }, { ...env, BERTH_WORKER_ID: 'gpu-1' });
    expect(r.connection).toEqual({ url: 'ws://127.0.0.1:8080/v2/_worker/ws', endpointId: 'echo', token: 't0k' });
    expect(r.workerId).toBe('gpu-1');
  });

  it('environment overrides code: BERTH_CONCURRENCY, BERTH_DRAIN_TIMEOUT_MS, BERTH_LOG_LEVEL', () => {
    const r = resolveStartOptions(
      { handler, concurrency: 2, drainTimeoutMs: 5, logLevel: 'warn' },
      { BERTH_CONCURRENCY: '8', BERTH_DRAIN_TIMEOUT_MS: '100', BERTH_LOG_LEVEL: 'DEBUG' },
    );
    expect(r).toMatchObject({ concurrency: 8, drainTimeoutMs: 100, logLevel: 'debug' });
    expect(resolveStartOptions({ handler, concurrency: 3 }, {}).concurrency).toBe(3);
  });

  it('retry: none by default; attempts and backoffMs from code, the environment winning; bad values named', () => {
    expect(resolveStartOptions({ handler }, {}).retry).toEqual({ attempts: 1, backoffMs: 0 });
    expect(resolveStartOptions({ handler, retry: { attempts: 3 } }, {}).retry).toEqual({
      attempts: 3,
      backoffMs: 1000,
    });
    expect(
      resolveStartOptions(
        { handler, retry: { attempts: 3, backoffMs: 50 } },
        { BERTH_RETRY_ATTEMPTS: '5', BERTH_RETRY_BACKOFF_MS: '7' },
      ).retry,
    ).toEqual({
      attempts: 5,
      backoffMs: 7,
    });
    expect(resolveStartOptions({ handler }, { BERTH_RETRY_ATTEMPTS: '2' }).retry).toEqual({
      attempts: 2,
      backoffMs: 1000,
    });
    expect(() => resolveStartOptions({ handler, retry: { attempts: 0 } }, {})).toThrow(
      'retry.attempts must be a whole number from 1 to 100 (got 0)',
    );
    expect(() => resolveStartOptions({ handler, retry: { attempts: 2, backoffMs: -1 } }, {})).toThrow(
      'retry.backoffMs must be a whole number from 0 to 3600000 (got -1)',
    );
    expect(() => resolveStartOptions({ handler, retry: 3 as never }, {})).toThrow(
      'retry must be an object such as { attempts: 3, backoffMs: 1000 } (got 3)',
    );
    expect(() => resolveStartOptions({ handler, retry: {} as never }, {})).toThrow('retry.attempts must be set');
    expect(() => resolveStartOptions({ handler }, { BERTH_RETRY_ATTEMPTS: 'many' })).toThrow(ConfigError);
  });

  it('batch: concurrency defaults to maxSize, maxWaitMs to 10; the environment wins; bad values named', () => {
    const batchHandler = (jobs: unknown[]) => jobs;
    const r = resolveStartOptions({ batch: { maxSize: 16 }, handler: batchHandler }, {});
    expect(r.concurrency).toBe(16);
    expect(r.batcher?.options).toEqual({ maxSize: 16, maxWaitMs: 10 });
    expect(r.handler).not.toBe(batchHandler); // the per-job handler that joins batches
    const fromEnv = resolveStartOptions(
      { batch: { maxSize: 16, maxWaitMs: 5 }, handler: batchHandler, concurrency: 32 },
      { BERTH_BATCH_MAX_SIZE: '8', BERTH_BATCH_MAX_WAIT_MS: '0' },
    );
    expect(fromEnv.batcher?.options).toEqual({ maxSize: 8, maxWaitMs: 0 });
    expect(fromEnv.concurrency).toBe(32);
    const bad =
      (batch: unknown, extra: Record<string, unknown> = {}) =>
      () =>
        resolveStartOptions({ handler: batchHandler, batch, ...extra } as never, {});
    expect(bad({ maxWaitMs: 5 })).toThrow('batch.maxSize must be set');
    expect(bad({ maxSize: 0 })).toThrow('batch.maxSize must be a whole number from 1 to 1024 (got 0)');
    expect(bad({ maxSize: 4, maxWaitMs: -1 })).toThrow('batch.maxWaitMs must be a whole number from 0 to 60000');
    expect(bad(16)).toThrow('batch must be an object such as { maxSize: 16, maxWaitMs: 10 } (got 16)');
    expect(bad({ maxSize: 8 }, { concurrency: 4 })).toThrow(
      'concurrency (4) must be at least batch.maxSize (8): a batch holds at most concurrency jobs',
    );
    expect(() =>
      resolveStartOptions({ batch: { maxSize: 8 }, handler: batchHandler }, { BERTH_CONCURRENCY: '2' }),
    ).toThrow(ConfigError);
  });

  it('announces streaming for generator handlers and return_aggregate_stream', () => {
    expect(resolveStartOptions({ handler: async function* () {} }, {}).stream).toBe(true);
    expect(resolveStartOptions({ handler: function* () {} }, {}).stream).toBe(true);
    expect(resolveStartOptions({ handler, return_aggregate_stream: true }, {}).stream).toBe(true);
  });

  it.each([
    [{ handler: 'nope' }, {}, 'handler must be a function (got "nope")'],
    [{ handler, concurrency: 0 }, {}, 'concurrency must be a whole number from 1 to 1024 (got 0)'],
    [
      { handler },
      { BERTH_CONCURRENCY: 'four' },
      'BERTH_CONCURRENCY must be a whole number from 1 to 1024 (got "four")',
    ],
    [{ handler }, { BERTH_LOG_LEVEL: 'loud' }, 'BERTH_LOG_LEVEL must be one of'],
    [{ handler }, { BERTH_URL: 'ftp://x' }, 'BERTH_URL must start with http://'],
    [{ handler }, { BERTH_URL: 'not a url' }, 'BERTH_URL must be a URL'],
    [{ handler }, { BERTH_URL: 'http://x' }, 'BERTH_ENDPOINT_ID must be set'],
    [{ handler }, { ...env, BERTH_ENDPOINT_ID: 'Bad_Id' }, 'BERTH_ENDPOINT_ID must match'],
    [{ handler }, { ...env, BERTH_WORKER_TOKEN: '' }, 'BERTH_WORKER_TOKEN must be set'],
    [{ handler }, { BERTH_WORKER_ID: 'has space' }, 'BERTH_WORKER_ID must be'],
  ])('rejects %o with env %o', (options, environment, message) => {
    expect(() => resolveStartOptions(options as never, environment)).toThrow(ConfigError);
    expect(() => resolveStartOptions(options as never, environment)).toThrow(message);
  });
});

describe('workerSocketUrl', () => {
  it.each([
    ['http://127.0.0.1:8080', 'ws://127.0.0.1:8080/v2/_worker/ws'],
    ['https://berth.example.com/', 'wss://berth.example.com/v2/_worker/ws'],
    ['https://example.com/berth/?x=1', 'wss://example.com/berth/v2/_worker/ws'],
    ['ws://10.0.0.1:9000', 'ws://10.0.0.1:9000/v2/_worker/ws'],
  ])('%s -> %s', (base, expected) => {
    expect(workerSocketUrl(base)).toBe(expected);
  });
});
