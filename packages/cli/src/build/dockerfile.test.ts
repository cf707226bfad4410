import { describe, expect, it } from 'vitest';
import type { ResolvedEndpoint } from '../config/index.js';
import { deploySettings } from './deploy.js';
import { dockerfile } from './dockerfile.js';
import { checkDockerfile } from './dockerfile-check.test-helpers.js';

const ep = (over: Partial<ResolvedEndpoint> = {}): ResolvedEndpoint => ({
  id: 'tts',
  worker: '/app/tts.ts',
  workers: 1,
  minWorkers: 1,
  maxWorkers: 3,
  idleTimeoutMs: 5000,
  scaler: undefined,
  bufferWorkers: 0,
  image: undefined,
  docker: {},
  concurrency: 4,
  drainTimeoutMs: undefined,
  apt: ['espeak-ng', 'ffmpeg'],
  ...over,
});

describe('image settings', () => {
  it("drain below Docker's 10 s grace by default; a longer configured drain gets a longer stop timeout", () => {
    expect(deploySettings(ep())).toMatchObject({
      drainTimeoutMs: 7000,
      stopTimeoutSeconds: 10,
      kubernetes: { terminationGracePeriodSeconds: 30 },
      env: { BERTH_DRAIN_TIMEOUT_MS: '7000', BERTH_CONCURRENCY: '4' },
      scaling: { minWorkers: 1, maxWorkers: 3, idleTimeoutMs: 5000 },
      apt: ['espeak-ng', 'ffmpeg'],
    });
    const long = deploySettings(ep({ drainTimeoutMs: 60_000, concurrency: undefined }));
    expect(long).toMatchObject({
      stopTimeoutSeconds: 63,
      kubernetes: { terminationGracePeriodSeconds: 63 },
      env: { BERTH_DRAIN_TIMEOUT_MS: '60000' },
    });
    expect(long.env).not.toHaveProperty('BERTH_CONCURRENCY');
  });

  it('CPU Dockerfile: configurable base, apt packages with tini as init, settings as ENV, only COPY of installed dependencies', () => {
    const d = deploySettings(ep());
    const text = dockerfile({
      endpointId: 'tts',
      hasDependencies: true,
      variant: 'cpu',
      apt: d.apt,
      env: d.env,
      stopTimeoutS: d.stopTimeoutSeconds,
      baseImage: 'node:24-bookworm-slim',
    });
    expect(text).toMatch(/^ARG BASE_IMAGE=node:24-bookworm-slim\nFROM \$\{BASE_IMAGE\}$/m);
    expect(text).toContain('apt-get install -y --no-install-recommends tini espeak-ng ffmpeg');
    expect(text).toContain(
      'ENV BERTH_ENDPOINT_ID=tts BERTH_MODELS_DIR=/models BERTH_DEVICE=cpu BERTH_DRAIN_TIMEOUT_MS=7000 BERTH_CONCURRENCY=4',
    );
    expect(text).toContain('COPY --chown=node:node node_modules ./node_modules');
    expect(text).toContain('ENTRYPOINT ["/usr/bin/tini", "--"]');
    expect(text).toContain('--stop-timeout 10');
    expect(text).not.toMatch(/^RUN .*npm/m);
    expect(checkDockerfile(text, '/nonexistent').problems).toEqual([
      'COPY package.json: not found in /nonexistent',
      'COPY package-lock.json: not found in /nonexistent',
      'COPY node_modules: not found in /nonexistent',
      'COPY worker.mjs: not found in /nonexistent',
      'COPY worker.mjs.map: not found in /nonexistent',
    ]);
    // Without system packages: no apt, no tini; the Run line says --init.
    const plain = dockerfile({ endpointId: 'echo', hasDependencies: false, variant: 'cpu' });
    expect(plain).not.toMatch(/apt-get|tini|node_modules|package-lock/);
    expect(plain).toContain('# Run:    docker run --init --stop-timeout 10');
  });

  it('CUDA Dockerfile: Node copied from a pinned LTS image, onnxruntime CUDA provider installed explicitly, device auto', () => {
    const text = dockerfile({
      endpointId: 'image',
      hasDependencies: true,
      hasOnnxruntime: true,
      variant: 'cuda',
      apt: ['ffmpeg'],
    });
    expect(text).toMatch(/^ARG NODE_IMAGE=node:(22|24)\.\d+\.\d+-bookworm-slim$/m);
    expect(text).toMatch(/^ARG CUDA_IMAGE=nvidia\/cuda:12\.\d+\.\d+-cudnn-runtime-ubuntu22\.04$/m);
    expect(text).toContain('COPY --from=node /usr/local/bin/node /usr/local/bin/node');
    expect(text).not.toMatch(/nodesource|curl .*\| *bash/);
    expect(text).toContain(
      'RUN cd node_modules/onnxruntime-node && ONNXRUNTIME_NODE_INSTALL=cuda12 node script/install.js',
    );
    expect(text).toContain('ca-certificates tini ffmpeg');
    expect(text).toContain('BERTH_DEVICE=auto');
    expect(text).toContain('docker run --gpus all');
    const check = checkDockerfile(text, '/nonexistent');
    expect(check.instructions.slice(0, 4)).toEqual(['ARG', 'ARG', 'FROM', 'FROM']);
    expect(check.problems.some((p) => p.includes('/usr/local/bin/node'))).toBe(false);
  });
});
