import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/index.js';
import { parseServeArgs } from '../commands/serve.js';
import { containerSpec } from './container-spec.js';
import { scaledImages } from './scale-options.js';
import { backoffDelay } from './scaler-state.js';

const config = resolveConfig(
  {
    endpoints: {
      echo: { worker: './echo.ts', maxWorkers: 4, concurrency: 4, image: 'echo-worker', docker: { network: 'host' } },
      sleep: { worker: './sleep.ts', maxWorkers: 2, drainTimeoutMs: 60_000 },
      off: { worker: './off.ts', workers: 0, image: 'off-worker' },
    },
  },
  '/p/berth.config.json',
);
const scale = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseServeArgs(argv, env, '/p').scale;

describe('berth serve --scale flags', () => {
  it('reads --scale docker, --image, --scale-name and --worker-url', () => {
    expect(scale(['--scale', 'docker', '--image', 'sleep=reg/sleep:2', '--scale-name', 'gpu-box'])).toEqual({
      mode: 'docker',
      images: { sleep: 'reg/sleep:2' },
      name: 'gpu-box',
      workerUrl: undefined,
    });
    expect(scale([])).toEqual({ mode: undefined, images: {}, name: 'berth', workerUrl: undefined });
  });

  it.each([
    [['--scale', 'k8s'], '--scale: only "docker" is supported (got "k8s")'],
    [
      ['--scale', 'docker', '--image', 'sleep'],
      '--image must be <endpoint>=<image>, like echo=echo-worker (got "sleep")',
    ],
    [['--image', 'sleep=x'], '--image and --worker-url apply with --scale docker'],
    [
      ['--scale', 'docker', '--scale-name', 'Big Box'],
      '--scale-name must be lowercase letters, digits, ".", "_" or "-" (got "Big Box")',
    ],
  ])('%j -> %s', (argv, message) => {
    expect(() => scale(argv)).toThrow(message);
  });

  it('the image of each endpoint: --image over the config; none and workers: 0 not scaled', () => {
    expect([...scaledImages(scale(['--scale', 'docker', '--image', 'sleep=s']), config)]).toEqual([
      ['echo', 'echo-worker'],
      ['sleep', 's'],
    ]);
    expect(() => scaledImages(scale(['--scale', 'docker']), undefined)).toThrow(/needs --config/);
    expect(() => scaledImages(scale(['--scale', 'docker', '--image', 'nope=x']), config)).toThrow(
      /"nope" is not an endpoint of \/p\/berth.config.json \(known: echo, sleep, off\)/,
    );
    const bare = resolveConfig({ endpoints: { a: { worker: './a.ts' } } }, '/p/b.json');
    expect(() => scaledImages(scale(['--scale', 'docker']), bare)).toThrow(/no endpoint of \/p\/b.json has an image/);
  });
});

describe('containerSpec', () => {
  it("the endpoint's environment, labels, docker settings, deploy.json's stop timeout, init, no restart", () => {
    const [echo, sleep] = config.endpoints;
    const spec = containerSpec(
      { ep: echo!, image: 'echo-worker' },
      'b-1a2b3c4d-echo-1',
      { controlPlane: 'b', deployment: '1a2b3c4d' },
      'http://127.0.0.1:8080',
      'berth_wk_x',
    );
    expect(spec).toEqual({
      Image: 'echo-worker',
      Env: [
        'BERTH_DRAIN_TIMEOUT_MS=7000',
        'BERTH_CONCURRENCY=4',
        'BERTH_URL=http://127.0.0.1:8080',
        'BERTH_ENDPOINT_ID=echo',
        'BERTH_WORKER_ID=b-1a2b3c4d-echo-1',
        'BERTH_WORKER_TOKEN=berth_wk_x',
      ],
      Labels: { 'berth.control-plane': 'b', 'berth.deployment': '1a2b3c4d', 'berth.endpoint': 'echo' },
      StopTimeout: 10,
      HostConfig: { NetworkMode: 'host', RestartPolicy: { Name: 'no' }, Init: true },
    });
    const gpu = { ...sleep!, docker: { mounts: ['/srv/m:/models:ro'], gpus: '2' } };
    const owner = { controlPlane: 'b', deployment: '1a2b3c4d' };
    const s2 = containerSpec({ ep: gpu, image: 's' }, 'b-1a2b3c4d-sleep-1', owner, 'http://lb:80', 't');
    expect(s2.StopTimeout).toBe(63);
    expect(s2.HostConfig).toEqual({
      Binds: ['/srv/m:/models:ro'],
      RestartPolicy: { Name: 'no' },
      Init: true,
      DeviceRequests: [{ Driver: '', Count: 2, Capabilities: [['gpu']] }],
    });
  });
});

describe('backoffDelay (crash backoff, as berth dev)', () => {
  it('0.5 s doubling to 8 s, then 60 s after 5 crashes in a row', () => {
    expect([1, 2, 3, 4, 5, 6, 9].map(backoffDelay)).toEqual([500, 1000, 2000, 4000, 8000, 60_000, 60_000]);
  });
});
