import { describe, expect, it } from 'vitest';
import { curlExamples, dialableUrl, readyLine } from '../internal/banner.js';
import { workerSpecs } from './dev.js';

describe('workerSpecs', () => {
  const config = {
    file: '/app/berth.config.json',
    dir: '/app',
    endpoints: [
      {
        id: 'echo',
        worker: '/app/echo.ts',
        workers: 2,
        minWorkers: 2,
        maxWorkers: 2,
        idleTimeoutMs: 5000,
        scaler: undefined,
        bufferWorkers: 0,
        image: undefined,
        docker: {},
        concurrency: 4,
        drainTimeoutMs: undefined,
        apt: [],
      },
      {
        id: 'gpu',
        worker: '/app/gpu.ts',
        workers: 1,
        minWorkers: 1,
        maxWorkers: 1,
        idleTimeoutMs: 5000,
        scaler: undefined,
        bufferWorkers: 0,
        image: undefined,
        docker: {},
        concurrency: undefined,
        drainTimeoutMs: undefined,
        apt: [],
      },
      {
        id: 'ext',
        worker: '/app/ext.ts',
        workers: 0,
        minWorkers: 0,
        maxWorkers: 0,
        idleTimeoutMs: 5000,
        scaler: undefined,
        bufferWorkers: 0,
        image: undefined,
        docker: {},
        concurrency: undefined,
        drainTimeoutMs: undefined,
        apt: [],
      },
    ],
    models: {},
  };
  const env = {
    PATH: '/bin',
    BERTH_API_KEY: 'secret',
    BERTH_CONCURRENCY: '99',
    BERTH_WORKER_ID: 'x',
    BERTH_DRAIN_TIMEOUT_MS: '100',
  };
  const specs = workerSpecs(config, 'http://127.0.0.1:8080', 'tok', env);

  it('one spec per worker process, ids <endpoint>-<n>, cwd the config folder', () => {
    expect(specs.map((s) => [s.endpointId, s.workerId, s.file, s.cwd])).toEqual([
      ['echo', 'echo-1', '/app/echo.ts', '/app'],
      ['echo', 'echo-2', '/app/echo.ts', '/app'],
      ['gpu', 'gpu-1', '/app/gpu.ts', '/app'],
    ]);
  });

  it('sets the worker env; drops the API key and inherited per-worker settings', () => {
    expect(specs[1]?.env).toMatchObject({
      PATH: '/bin',
      BERTH_URL: 'http://127.0.0.1:8080',
      BERTH_ENDPOINT_ID: 'echo',
      BERTH_WORKER_TOKEN: 'tok',
      BERTH_WORKER_ID: 'echo-2',
      BERTH_CONCURRENCY: '4',
      BERTH_DRAIN_TIMEOUT_MS: '100',
    });
    expect(specs[0]?.env['BERTH_API_KEY']).toBeUndefined();
    // No concurrency in the config: the handler's start({ concurrency }) decides.
    expect(specs[2]?.env['BERTH_CONCURRENCY']).toBeUndefined();
  });

  it('defaults BERTH_DRAIN_TIMEOUT_MS below the SIGKILL deadline', () => {
    expect(workerSpecs(config, 'http://x:1', 't', {})[0]?.env['BERTH_DRAIN_TIMEOUT_MS']).toBe('4000');
  });

  it("the config's drainTimeoutMs, capped below the SIGKILL deadline", () => {
    const ep = { ...config.endpoints[0]!, drainTimeoutMs: 1500 };
    expect(workerSpecs({ ...config, endpoints: [ep] }, 'http://x:1', 't', {})[0]?.env['BERTH_DRAIN_TIMEOUT_MS']).toBe(
      '1500',
    );
    expect(
      workerSpecs({ ...config, endpoints: [{ ...ep, drainTimeoutMs: 60_000 }] }, 'http://x:1', 't', {})[0]?.env[
        'BERTH_DRAIN_TIMEOUT_MS'
      ],
    ).toBe('4000');
  });
});

describe('banner', () => {
  it('the ready line holds "ready", the URL and the endpoints, on one line', () => {
    const line = readyLine('http://127.0.0.1:8080', ['echo', 'stream'], false);
    expect(line).toBe('berth ready at http://127.0.0.1:8080 (endpoints: echo, stream)');
    expect(readyLine('http://127.0.0.1:1', [], true)).not.toContain('\n');
  });

  it('workers dial a concrete address, not the wildcard one listened on', () => {
    expect(dialableUrl('http://0.0.0.0:8080')).toBe('http://127.0.0.1:8080');
    expect(dialableUrl('http://[::]:8080')).toBe('http://[::1]:8080');
    expect(dialableUrl('http://192.168.1.2:8080')).toBe('http://192.168.1.2:8080');
  });

  it('curl lines for runsync, run and status', () => {
    const lines = curlExamples('http://0.0.0.0:8080', 'k', 'echo').filter((l) => l.startsWith('curl'));
    expect(lines).toEqual([
      `curl -s -X POST http://127.0.0.1:8080/v2/echo/runsync -H 'Authorization: Bearer k' -H 'Content-Type: application/json' -d '{"input":{"hello":"world"}}'`,
      `curl -s -X POST http://127.0.0.1:8080/v2/echo/run -H 'Authorization: Bearer k' -H 'Content-Type: application/json' -d '{"input":{"hello":"world"}}'`,
      `curl -s http://127.0.0.1:8080/v2/echo/status/<job id> -H 'Authorization: Bearer k'`,
    ]);
  });
});
