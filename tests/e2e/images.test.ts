import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGES } from '../../packages/cli/src/build/dockerfile.js';
import { dockerUnavailable, ensureBaseImage, imageSizeMb, startDocker, type Docker } from './docker.test-helpers.js';
import { BIN, REPO_ROOT } from './harness.test-helpers.js';

/**
 * Worker images built and run as a user deploys them: `berth build` (dependencies installed into the build
 * folder, so the image build needs no npm registry), `docker build --network=host`, then each image run with
 * `--network=host` against a real `berth serve` on 127.0.0.1, completing a job; `docker stop` during a long job
 * drains, hands the job back and exits 0. Images and layers stay in the daemon's data root between runs.
 */
const skip = dockerUnavailable();
if (skip) console.log(`[images] skipped: ${skip}`);

const MODELS = join(REPO_ROOT, '../shared/models');
const KEY = 'berth_images_key';
const TOKEN = 'berthw_images_token';
mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const work = mkdtempSync(join(REPO_ROOT, '.berth', 'images-'));
const figures: string[] = [];
let docker: Docker;
let serve: ChildProcess | undefined;
let url = '';
const containers: string[] = [];

function note(line: string): void {
  figures.push(line);
  console.log(`[images] ${line}`);
}

function berthBuild(config: string, out: string, endpoints: string[]): void {
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    [BIN, 'build', '--config', config, '--out', out, ...endpoints.flatMap((e) => ['-e', e])],
    { encoding: 'utf8', timeout: 300_000, env: { ...process.env, NO_COLOR: '1' } },
  );
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  note(`berth build ${endpoints.join(', ')}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

function dockerBuild(dir: string, tag: string): void {
  const t0 = performance.now();
  docker.run(['build', '--network=host', '-q', '-t', tag, dir]);
  note(`docker build ${tag}: ${((performance.now() - t0) / 1000).toFixed(1)} s, ${imageSizeMb(docker, tag)} MB`);
}

function runWorker(tag: string, name: string, extra: string[] = []): void {
  docker.run(['rm', '-f', name]);
  containers.push(name);
  docker.run([
    'run',
    '-d',
    '--name',
    name,
    '--network=host',
    '-e',
    `BERTH_URL=${url}`,
    '-e',
    `BERTH_WORKER_TOKEN=${TOKEN}`,
    '-e',
    `BERTH_WORKER_ID=${name}`,
    ...extra,
    tag,
  ]);
}

async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string | (() => string),
  ms: number,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const logsOf = (name: string): string => {
  const r = spawnSync('docker', ['logs', name], { env: docker.env, encoding: 'utf8' });
  return `${r.stdout}${r.stderr}`;
};

/** What to read when a container stays silent: its state, its processes, and the room left on the data root. */
function containerState(name: string): string {
  const sh = (args: string[]) => {
    const r = spawnSync('docker', args, { env: docker.env, encoding: 'utf8', timeout: 20_000 });
    return `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
  };
  const df = spawnSync('df', ['-h', '/var/lib/docker', tmpdir()], { encoding: 'utf8' });
  return [
    `state: ${sh(['inspect', name, '--format', '{{json .State}}'])}`,
    `processes:\n${sh(['top', name])}`,
    `disk:\n${df.stdout ?? ''}${df.stderr ?? ''}`,
  ].join('\n');
}

async function api(path: string, body?: unknown): Promise<Record<string, unknown>> {
  const send = () =>
    fetch(`${url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  // A pooled keep-alive socket the server closed while idle (minutes of docker build between requests) fails
  // before the request is sent: try once more on a new socket.
  const res = await send().catch((err: unknown) => {
    if ((err as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw err;
    return send();
  });
  return (await res.json()) as Record<string, unknown>;
}

async function runJob(endpoint: string, name: string, input: unknown): Promise<Record<string, unknown>> {
  await waitFor(
    () => logsOf(name).includes('connected to the control plane'),
    () => `${name} to connect:\n${logsOf(name)}\n${containerState(name)}`,
    60_000,
  );
  const t0 = performance.now();
  const job = await api(`/v2/${endpoint}/runsync?wait=120000`, { input });
  note(`${name}: job ${String(job['status'])} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  expect(job, logsOf(name).slice(-3000)).toMatchObject({ status: 'COMPLETED', workerId: name });
  return job;
}

describe.skipIf(skip !== undefined)(
  `worker images (docker build + docker run against berth serve)${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    beforeAll(async () => {
      docker = await startDocker();
      const base = ensureBaseImage(docker, BASE_IMAGES.cpu);
      note(
        `docker daemon ${docker.startedHere ? 'started here' : 'reused'}; base ${BASE_IMAGES.cpu}${base.made ? ` made from the stand-in in ${(base.ms / 1000).toFixed(0)} s` : ' present'}; load ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
      );
      serve = spawn(
        process.execPath,
        [
          BIN,
          'serve',
          '--host',
          '127.0.0.1',
          '--port',
          '0',
          '--store',
          'memory',
          '--endpoint',
          'echo,sleep,scaffold,image,tts',
        ],
        {
          env: { ...process.env, BERTH_API_KEY: KEY, BERTH_WORKER_TOKEN: TOKEN, NO_COLOR: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      serve.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      serve.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      await waitFor(() => /ready at (http:\/\/\S+)/.test(out), `berth serve:\n${out}`, 30_000);
      url = /ready at (http:\/\/[^\s)]+)/.exec(out)![1]!;
    }, 900_000);

    afterAll(async () => {
      for (const name of containers) spawnSync('docker', ['rm', '-f', name], { env: docker?.env, stdio: 'ignore' });
      serve?.kill('SIGTERM');
      await docker?.stop();
      rmSync(work, { recursive: true, force: true });
      console.log(
        `[images] figures (load ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}):\n  ${figures.join('\n  ')}`,
      );
    }, 120_000);

    it("examples/basic: echo runs with the config's concurrency baked in", async () => {
      berthBuild(join(REPO_ROOT, 'examples/basic/berth.config.json'), join(work, 'basic'), ['echo', 'sleep']);
      dockerBuild(join(work, 'basic/echo'), 'berth-test/echo');
      dockerBuild(join(work, 'basic/sleep'), 'berth-test/sleep');
      runWorker('berth-test/echo', 'img-echo');
      const job = await runJob('echo', 'img-echo', { hello: 'image' });
      expect(job['output']).toEqual({ hello: 'image' });
      // The worker's JSON log line (stderr is not a terminal): the config's concurrency is baked into the image.
      const starting = logsOf('img-echo')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l['msg'] === 'worker starting');
      expect(starting).toMatchObject({ endpointId: 'echo', workerId: 'img-echo', concurrency: 4 });
    }, 300_000);

    it('a scaffolded basic project (create-worker) builds and completes its test_input.json', async () => {
      const dir = join(work, 'scaffold');
      const r = spawnSync(
        process.execPath,
        [
          join(REPO_ROOT, 'packages/create-worker/bin/create-worker.js'),
          dir,
          '--template',
          'basic',
          '--no-install',
          '--local',
          REPO_ROOT,
        ],
        { encoding: 'utf8', timeout: 120_000, env: { ...process.env, npm_config_user_agent: '' } },
      );
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
      // create-worker names the endpoint after the folder; `berth serve` above serves it (--endpoint).
      const endpoint = Object.keys(
        (JSON.parse(readFileSync(join(dir, 'berth.config.json'), 'utf8')) as { endpoints: object }).endpoints,
      )[0]!;
      expect(endpoint).toBe('scaffold');
      berthBuild(join(dir, 'berth.config.json'), join(work, 'scaffold-build'), []);
      dockerBuild(join(work, 'scaffold-build', endpoint), 'berth-test/scaffold');
      runWorker('berth-test/scaffold', 'img-scaffold');
      const input = (JSON.parse(readFileSync(join(dir, 'test_input.json'), 'utf8')) as { input: unknown }).input;
      await runJob(endpoint, 'img-scaffold', input);
    }, 300_000);

    it('examples/image-worker: models mounted read-only, an image job completes', async () => {
      berthBuild(join(REPO_ROOT, 'examples/image-worker/berth.config.json'), join(work, 'image'), ['image']);
      dockerBuild(join(work, 'image/image'), 'berth-test/image');
      runWorker('berth-test/image', 'img-image', ['-v', `${MODELS}:/models:ro`]);
      const job = await runJob('image', 'img-image', {
        prompt: 'a big red circle on a blue background',
        num_inference_steps: 4,
      });
      expect((job['output'] as { image_url?: string }).image_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\//);
    }, 600_000);

    it('the image worker without its models, or with a mount uid 1000 cannot read, exits 1 naming the path and the mount', async () => {
      const bare = spawnSync(
        'docker',
        [
          'run',
          '--rm',
          '--network=host',
          '-e',
          `BERTH_URL=${url}`,
          '-e',
          `BERTH_WORKER_TOKEN=${TOKEN}`,
          'berth-test/image',
        ],
        { env: docker.env, encoding: 'utf8', timeout: 120_000 },
      );
      expect(bare.status).toBe(1);
      expect(bare.stderr).toContain('image worker cannot start:\n  - model folder not found: /models/tiny-sd');
      expect(bare.stderr).toContain('docker run -v /srv/models:/models:ro');
      if (process.getuid?.() === 1000) return; // the folder below would belong to uid 1000 itself
      const locked = join(work, 'locked-models');
      mkdirSync(join(locked, 'tiny-sd'), { recursive: true, mode: 0o700 });
      chmodSync(locked, 0o700); // owned by root: uid 1000 cannot enter it
      const r = spawnSync(
        'docker',
        [
          'run',
          '--rm',
          '--network=host',
          '-e',
          `BERTH_URL=${url}`,
          '-e',
          `BERTH_WORKER_TOKEN=${TOKEN}`,
          '-v',
          `${locked}:/models:ro`,
          'berth-test/image',
        ],
        { env: docker.env, encoding: 'utf8', timeout: 120_000 },
      );
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('model folder /models/tiny-sd is not readable by uid 1000 (EACCES)');
    }, 300_000);

    it("examples/audio-worker: espeak-ng and ffmpeg come from the config's apt; an MP3 job completes", async () => {
      berthBuild(join(REPO_ROOT, 'examples/audio-worker/berth.config.json'), join(work, 'audio'), ['tts']);
      expect(readFileSync(join(work, 'audio/tts/Dockerfile'), 'utf8')).toContain(
        'apt-get install -y --no-install-recommends tini espeak-ng ffmpeg',
      );
      dockerBuild(join(work, 'audio/tts'), 'berth-test/tts');
      runWorker('berth-test/tts', 'img-tts');
      const job = await runJob('tts', 'img-tts', { text: 'Hello from a container.', output_format: 'mp3' });
      expect(job['output']).toMatchObject({ format: 'mp3' });
    }, 600_000);

    it('docker stop during a long job: drains within the grace, exits 0, and the job is requeued at once and completed elsewhere', async () => {
      runWorker('berth-test/sleep', 'img-sleep-1');
      await waitFor(
        () => logsOf('img-sleep-1').includes('connected to the control plane'),
        'img-sleep-1 to connect',
        60_000,
      );
      const { id } = (await api('/v2/sleep/run', { input: { ms: 15_000 } })) as { id: string };
      await waitFor(
        async () => (await api(`/v2/sleep/status/${id}`))['status'] === 'IN_PROGRESS',
        'the job to start',
        30_000,
      );
      const t0 = performance.now();
      docker.run(['stop', 'img-sleep-1']); // Docker's default 10 s grace, then SIGKILL
      const stopS = (performance.now() - t0) / 1000;
      const exitCode = Number(docker.run(['inspect', 'img-sleep-1', '--format', '{{.State.ExitCode}}']));
      const after = await api(`/v2/sleep/status/${id}`);
      note(
        `docker stop during a 15 s job: container exited ${exitCode} after ${stopS.toFixed(1)} s (drain 7 s, grace 10 s); job then ${String(after['status'])}`,
      );
      expect(exitCode, logsOf('img-sleep-1').slice(-2000)).toBe(0);
      expect(stopS).toBeLessThan(10);
      expect(logsOf('img-sleep-1')).toContain('drain deadline reached; handing running jobs back to the queue');
      expect(after['status']).toBe('IN_QUEUE');
      // Another worker takes it straight away.
      const t1 = performance.now();
      runWorker('berth-test/sleep', 'img-sleep-2');
      await waitFor(
        async () => (await api(`/v2/sleep/status/${id}`))['status'] === 'COMPLETED',
        'the requeued job to complete',
        60_000,
      );
      const done = await api(`/v2/sleep/status/${id}`);
      note(`requeued job completed by img-sleep-2 ${((performance.now() - t1) / 1000).toFixed(1)} s after it started`);
      expect(done).toMatchObject({ status: 'COMPLETED', workerId: 'img-sleep-2', output: { slept: 15_000 } });
    }, 180_000);
  },
);
