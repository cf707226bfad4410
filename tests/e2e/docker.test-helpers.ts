import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE_IMAGES } from '../../packages/cli/src/build/dockerfile.js';
import { BIN, REPO_ROOT } from './harness.test-helpers.js';

/**
 * A docker daemon for the image tests: the one `DOCKER_HOST` (or the default socket) answers, else a `dockerd`
 * started here with nothing outside loopback (no bridge, no iptables) on a socket in a temporary folder, its
 * images kept in `BERTH_DOCKER_DATA_ROOT` (default /var/lib/docker) so layers are reused between runs, and
 * stopped by its pid afterwards. Every build and container uses `--network=host`. Its storage driver is
 * `BERTH_DOCKER_STORAGE_DRIVER`, else dockerd's choice (overlay2 on ext4/xfs); `vfs` (dockerd's fallback where
 * the data root cannot hold overlay mounts) copies the whole image at every container create, about 7 s for the
 * basic image here against 10 ms with overlay2, so a run on vfs says so: its cold start figures mean little.
 */
export interface Docker {
  /** Environment for the docker CLI (DOCKER_HOST). */
  env: NodeJS.ProcessEnv;
  /** Runs `docker <args>`; throws with its output when it fails. */
  run(args: string[], timeoutMs?: number): string;
  /** The daemon's storage driver (`overlay2`, `vfs`, ...). */
  storageDriver: string;
  /** Stops the daemon if this helper started it. */
  stop(): Promise<void>;
  startedHere: boolean;
}

/** Why the image tests cannot run here, or undefined when they can. */
export function dockerUnavailable(): string | undefined {
  for (const bin of ['docker', 'dockerd']) {
    if (spawnSync('sh', ['-c', `command -v ${bin}`]).status !== 0)
      return `${bin} is not installed (apt-get install docker.io debootstrap; .ci/run does)`;
  }
  if (!answers(process.env) && process.getuid?.() !== 0)
    return 'no docker daemon answers and starting dockerd needs root';
  return undefined;
}

function answers(env: NodeJS.ProcessEnv): boolean {
  return spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { env, timeout: 10_000 }).status === 0;
}

export async function startDocker(): Promise<Docker> {
  let env: NodeJS.ProcessEnv = { ...process.env };
  let daemon: ChildProcess | undefined;
  let dir: string | undefined;
  if (!answers(env)) {
    dir = mkdtempSync(join(tmpdir(), 'berth-dockerd-'));
    const sock = `unix://${dir}/docker.sock`;
    const log = openSync(join(dir, 'dockerd.log'), 'a');
    const args = [
      '--iptables=false',
      '--ip-forward=false',
      '--ip-masq=false',
      '--bridge=none',
      '--host',
      sock,
      '--data-root',
      process.env['BERTH_DOCKER_DATA_ROOT'] ?? '/var/lib/docker',
      ...(process.env['BERTH_DOCKER_STORAGE_DRIVER']
        ? ['--storage-driver', process.env['BERTH_DOCKER_STORAGE_DRIVER']]
        : []),
      '--exec-root',
      join(dir, 'exec'),
      '--pidfile',
      join(dir, 'dockerd.pid'),
    ];
    daemon = spawn('dockerd', args, { stdio: ['ignore', log, log] });
    env = { ...process.env, DOCKER_HOST: sock };
    const deadline = Date.now() + 60_000;
    while (!answers(env)) {
      if (daemon.exitCode !== null || Date.now() > deadline) {
        throw new Error(`dockerd did not start:\n${readFileSync(join(dir, 'dockerd.log'), 'utf8').slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  const run = (args: string[], timeoutMs = 600_000): string => {
    const r = spawnSync('docker', args, { env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20 });
    if (r.status !== 0)
      throw new Error(
        `docker ${args.join(' ')} failed (${r.status ?? r.signal}):\n${(r.stderr + r.stdout).slice(-4000)}`,
      );
    return r.stdout.trim();
  };
  const storageDriver = run(['info', '--format', '{{.Driver}}']);
  if (storageDriver === 'vfs')
    console.warn(
      '[docker] storage driver vfs: every container create copies the whole image (seconds each); set BERTH_DOCKER_STORAGE_DRIVER=overlay2 (or fuse-overlayfs) if the data root allows it',
    );
  return {
    env,
    run,
    storageDriver,
    startedHere: daemon !== undefined,
    async stop() {
      if (!daemon || daemon.exitCode !== null) return;
      const exited = new Promise((r) => daemon.once('exit', r));
      daemon.kill('SIGTERM'); // by its pid: the daemon this helper started, nothing else
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
      if (daemon.exitCode === null) daemon.kill('SIGKILL');
      if (dir) {
        // dockerd can leave its network namespace bind-mounted under the exec root (nsfs): unmount it, then remove.
        const netns = join(dir, 'exec', 'netns', 'default');
        if (existsSync(netns)) spawnSync('umount', ['-l', netns]);
        try {
          rmSync(dir, { recursive: true, force: true });
        } catch (err) {
          console.warn(`[images] could not remove ${dir}: ${String(err)}`);
        }
      }
    },
  };
}

/**
 * Makes sure `image` exists: the local stand-in for the official Node image (../shared/container/make-base-image.sh
 * makes `node:20-bookworm-slim` from Debian packages and this machine's Node) tagged as the name the Dockerfile
 * uses. On a machine with Docker Hub the real image would be pulled instead; this one has none.
 */
export function ensureBaseImage(docker: Docker, image: string): { made: boolean; ms: number } {
  const t0 = performance.now();
  const has = (name: string) =>
    spawnSync('docker', ['image', 'inspect', name], { env: docker.env, stdio: 'ignore' }).status === 0;
  if (has(image)) return { made: false, ms: 0 };
  const standIn = 'node:20-bookworm-slim';
  if (!has(standIn)) {
    const script = join(REPO_ROOT, '../shared/container/make-base-image.sh');
    if (!existsSync(script)) throw new Error(`${image} is missing and ${script} (which makes a stand-in) is not there`);
    const rootfs = mkdtempSync(join(tmpdir(), 'berth-rootfs-'));
    try {
      const r = spawnSync('bash', [script], {
        env: { ...docker.env, IMAGE: standIn, ROOTFS: rootfs },
        encoding: 'utf8',
        timeout: 600_000,
      });
      if (r.status !== 0) throw new Error(`make-base-image.sh failed:\n${(r.stdout + r.stderr).slice(-3000)}`);
    } finally {
      rmSync(rootfs, { recursive: true, force: true });
    }
  }
  if (standIn !== image) docker.run(['tag', standIn, image]);
  return { made: true, ms: Math.round(performance.now() - t0) };
}

/** `docker image inspect` size in MB (10^6, as `docker image ls` prints). */
export function imageSizeMb(docker: Docker, image: string): number {
  return Math.round(Number(docker.run(['image', 'inspect', image, '--format', '{{.Size}}'])) / 1e6);
}

/**
 * `berth build` of one examples/basic endpoint into `work`, then `docker build --network=host -t <tag>` (the base
 * image made first if needed): the image a scaler test runs.
 */
export function buildBasicImage(docker: Docker, endpoint: string, tag: string, work: string): void {
  ensureBaseImage(docker, BASE_IMAGES.cpu);
  const out = join(work, `build-${endpoint}`);
  const config = join(REPO_ROOT, 'examples/basic/berth.config.json');
  const r = spawnSync(process.execPath, [BIN, 'build', '--config', config, '--out', out, '-e', endpoint], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (r.status !== 0) throw new Error(`berth build failed:\n${r.stdout}${r.stderr}`);
  docker.run(['build', '--network=host', '-q', '-t', tag, join(out, endpoint)]);
}
