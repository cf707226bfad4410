import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ResolvedEndpoint } from '../config/index.js';
import { deploySettings } from './deploy.js';
import { checkExpose, dockerfile } from './dockerfile.js';
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

describe("checkExpose (a load-balancing endpoint's own Dockerfile)", () => {
  const template = readFileSync(new URL('../../../../templates/http/Dockerfile', import.meta.url), 'utf8');

  it("the http template's Dockerfile exposes its PORT; ENV PORT, variables and the final stage decide", () => {
    expect(checkExpose(template)).toEqual({ ports: [8080], port: 8080, problems: [] });
    expect(checkExpose('FROM node:22\nARG P=9000\nEXPOSE $P/tcp 53/udp\nCMD ["node"]')).toEqual({
      ports: [9000],
      port: 9000,
      problems: [],
    });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a Dockerfile variable, written as it is
    const split = 'FROM node:22\nENV PORT=8000 \\\n  PORT_HEALTH=8001\nEXPOSE ${PORT} 8001\n';
    expect(checkExpose(split)).toEqual({ ports: [8000, 8001], port: 8000, problems: [] });
    // Multi-stage: the builder's EXPOSE does not count.
    expect(checkExpose('FROM node:22 AS b\nEXPOSE 1\nFROM node:22-slim\nEXPOSE 3000\n').ports).toEqual([3000]);
  });

  it('no EXPOSE, an unexposed PORT or PORT_HEALTH, an unresolved variable: each a problem saying what to add', () => {
    expect(checkExpose('FROM node:22\nENV PORT=8080\nCMD ["node", "s.mjs"]').problems).toEqual([
      'no EXPOSE: add `EXPOSE 8080`, the port the server listens on (PORT); RunPod\'s "Expose HTTP Ports" and the Kubernetes Service need it',
    ]);
    expect(checkExpose('FROM node:22\nENV PORT 8080\nEXPOSE 3000').problems).toEqual([
      'ENV PORT=8080 is not exposed (EXPOSE 3000): expose the port the server listens on',
    ]);
    expect(checkExpose('FROM node:22\nENV PORT=80 PORT_HEALTH=81\nEXPOSE 80').problems).toEqual([
      'ENV PORT_HEALTH=81 is not exposed (EXPOSE 80): expose the port the server listens on',
    ]);
    expect(checkExpose('FROM node:22\nEXPOSE $NOPE').problems[0]).toBe(
      'EXPOSE $NOPE: not a port number (a variable it names has no value in the Dockerfile)',
    );
    // Comments are not instructions.
    expect(checkExpose('FROM node:22\n# EXPOSE 8080\n').ports).toEqual([]);
  });
});
