import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseFlags } from '../args.js';
import { bundleWorker } from '../build/bundle.js';
import { buildHttpEndpoint } from '../build/http-build.js';
import { DOCKERIGNORE, dockerfile } from '../build/dockerfile.js';
import { deploySettings } from '../build/deploy.js';
import { k8sManifests } from '../build/k8s.js';
import { installDependencies, type TargetArch } from '../build/install.js';
import { checkWorkerFiles, findConfigFile, loadConfig } from '../config/index.js';
import type { Io } from '../internal/io.js';
import { EXIT, UsageError } from '../internal/usage-error.js';
import { cliVersion } from '../internal/version.js';

export const BUILD_HELP = `Usage: berth build [--config <file>] [--endpoint <id>] [--out <dir>] [--external <pkg>] [--base-image <image>] [--arch x64|arm64]

Bundles each endpoint's handler (esbuild, @berth/worker included) into a deployable folder
<out>/<endpoint>/ holding:
  worker.mjs (+ .map)   the whole worker in one file; native packages stay external
  package.json          declares only those native packages, at the versions installed here
  package-lock.json     their exact tree, cut from the project's lock
  node_modules/         installed here with npm ci (linux/<arch>, other platforms' binaries pruned)
  Dockerfile            CPU image (node:22-bookworm-slim); only copies files, no registry needed
  Dockerfile.cuda       NVIDIA GPU image (CUDA 12 + cuDNN runtime, Node from a pinned image)
  deploy.json           stop timeout / grace period, drain deadline, environment, scaling
  k8s/                  deployment.yaml (Deployment, worker token from a Secret) and scaledobject.yaml
                        (KEDA ScaledObject on GET /v2/<endpoint>/scaling, scale to zero)
  .dockerignore
A load-balancing endpoint ("type": "http") brings its own image: its Dockerfile (next to the config file) must
EXPOSE the worker's port, and <out>/<endpoint>/k8s/ gets deployment.yaml and service.yaml on that port.
The container runs \`node worker.mjs\`, which connects to BERTH_URL with BERTH_WORKER_TOKEN (docker run -e).

Options:
  -c, --config <file>     config file (default: berth.config.* in the current folder)
  -e, --endpoint <id>     build only this endpoint (repeatable; default: all)
  -o, --out <dir>         output folder, relative to the config file (default: build); emptied first
      --external <pkg>    another package to keep out of the bundle and install in the image (repeatable)
      --base-image <img>  the CPU Dockerfile's default BASE_IMAGE and the CUDA one's NODE_IMAGE
                          (default node:22-bookworm-slim / node:22.12.0-bookworm-slim)
      --arch <arch>       x64 or arm64: the image's CPU, whose binaries are kept (default: this machine's)
  -h, --help              show this help
`;

export interface BuildArgs {
  help: boolean;
  config: string | undefined;
  endpoints: string[];
  out: string;
  external: string[];
  baseImage: string | undefined;
  arch: TargetArch;
}

export function parseBuildArgs(argv: readonly string[]): BuildArgs {
  const v = parseFlags('build', argv, {
    config: { type: 'string', short: 'c' },
    endpoint: { type: 'string', short: 'e', multiple: true },
    out: { type: 'string', short: 'o' },
    external: { type: 'string', multiple: true },
    'base-image': { type: 'string' },
    arch: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  const out = (v.out as string | undefined) ?? 'build';
  if (out.trim() === '') throw new UsageError('--out must not be empty', 'build');
  const arch = (v.arch as string | undefined) ?? (process.arch === 'arm64' ? 'arm64' : 'x64');
  if (arch !== 'x64' && arch !== 'arm64')
    throw new UsageError(`--arch must be x64 or arm64 (got ${JSON.stringify(arch)})`, 'build');
  const baseImage = v['base-image'] as string | undefined;
  if (baseImage !== undefined && !/^[a-z0-9][\w./:@-]*$/i.test(baseImage))
    throw new UsageError(
      `--base-image must be an image reference like node:22-bookworm-slim (got ${JSON.stringify(baseImage)})`,
      'build',
    );
  return {
    help: v.help === true,
    config: v.config as string | undefined,
    endpoints: (v.endpoint as string[] | undefined) ?? [],
    out,
    external: (v.external as string[] | undefined) ?? [],
    baseImage,
    arch,
  };
}

/** `berth build`: resolves with 0 when every folder was written, 1 when a bundle failed. */
export async function runBuild(argv: readonly string[], io: Io): Promise<number> {
  const args = parseBuildArgs(argv);
  if (args.help) {
    io.stdout.write(BUILD_HELP);
    return EXIT.ok;
  }
  // 1. Config and which endpoints.
  const config = await loadConfig(findConfigFile(args.config, io.cwd));
  checkWorkerFiles(config);
  const unknown = args.endpoints.filter((id) => !config.endpoints.some((e) => e.id === id));
  if (unknown.length)
    throw new UsageError(
      `unknown endpoint ${unknown.join(', ')} (endpoints: ${config.endpoints.map((e) => e.id).join(', ')})`,
      'build',
    );
  const endpoints = config.endpoints.filter((e) => args.endpoints.length === 0 || args.endpoints.includes(e.id));
  const outRoot = resolve(config.dir, args.out);
  if (outRoot === config.dir || config.dir.startsWith(`${outRoot}/`))
    throw new UsageError(`--out ${args.out} would empty the project folder`, 'build');
  const version = cliVersion();

  // 2. One folder per endpoint, with progress: bundling is the slow step.
  const total = endpoints.length;
  let failed = 0;
  const installed: string[] = [];
  const httpBuilt: string[] = [];
  for (const [i, ep] of endpoints.entries()) {
    const step = `[${i + 1}/${total}] ${ep.id}`;
    if (ep.http) {
      const r = buildHttpEndpoint(ep, config.dir, join(outRoot, ep.id));
      if (r.kind === 'failed') {
        io.stderr.write(`${step}: ${r.message}\n`);
        failed++;
      } else {
        io.stdout.write(`${step}: ${r.message}\n`);
        if (r.kind === 'built') httpBuilt.push(`  docker build -t ${r.image} ${show(io.cwd, r.context)}`);
      }
      continue;
    }
    if (ep.command) {
      io.stdout.write(
        `${step}: skipped: a "command" endpoint (${ep.command.join(' ')}) brings its own image; berth build bundles TypeScript workers\n`,
      );
      continue;
    }
    const dir = join(outRoot, ep.id);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    io.stdout.write(`${step}: bundling ${relative(config.dir, ep.worker)} with esbuild...\n`);
    const t0 = performance.now();
    let bundle;
    try {
      bundle = await bundleWorker({
        entry: ep.worker,
        outfile: join(dir, 'worker.mjs'),
        cwd: config.dir,
        extraExternal: args.external,
      });
    } catch (err) {
      io.stderr.write(`${step}: bundle failed:\n${err instanceof Error ? err.message : String(err)}\n`);
      failed++;
      continue;
    }
    const deps = Object.entries(bundle.dependencies);
    io.stdout.write(
      `${step}: worker.mjs ${(bundle.bytes / 1024).toFixed(0)} KiB in ${Math.round(performance.now() - t0)} ms; ` +
        `native dependencies: ${deps.length ? deps.map(([n, v]) => `${n}@${v}`).join(', ') : 'none'}\n`,
    );
    const pkg = {
      name: `${ep.id}-worker`,
      private: true,
      type: 'module',
      description: `Berth worker for endpoint ${ep.id}, bundled by berth build ${version}`,
      engines: { node: '>=20.11' },
      scripts: { start: 'node worker.mjs' },
      dependencies: bundle.dependencies,
    };
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
    writeFileSync(join(dir, '.dockerignore'), DOCKERIGNORE);
    // Dependencies go into the folder now, on this machine: the image build only copies them.
    if (deps.length) {
      try {
        const r = installDependencies({
          dir,
          projectDir: config.dir,
          name: pkg.name,
          dependencies: bundle.dependencies,
          arch: args.arch,
          installed,
        });
        io.stdout.write(
          r.reused
            ? `${step}: node_modules copied from ${show(io.cwd, r.reused)} (same lock) in ${r.ms} ms: ${mib(r.bytesInstalled)}\n`
            : `${step}: npm ci (${r.lock === 'project' ? "lock cut from the project's package-lock.json" : `lock resolved by npm: ${r.lockNote}`}) ` +
                `for linux/${args.arch} in ${r.ms} ms: node_modules ${mib(r.bytesInstalled - r.bytesPruned)} (${mib(r.bytesPruned)} of other platforms' binaries pruned)\n`,
        );
      } catch (err) {
        io.stderr.write(
          `${step}: installing dependencies failed: ${err instanceof Error ? err.message : String(err)}\n`,
        );
        failed++;
        continue;
      }
    }
    const deploy = deploySettings(ep);
    writeFileSync(join(dir, 'deploy.json'), `${JSON.stringify(deploy, null, 2)}\n`);
    mkdirSync(join(dir, 'k8s'), { recursive: true });
    for (const [file, text] of Object.entries(k8sManifests(ep, deploy, ep.image ?? deploy.image)))
      writeFileSync(join(dir, 'k8s', file), text);
    for (const variant of ['cpu', 'cuda'] as const) {
      const name = variant === 'cpu' ? 'Dockerfile' : 'Dockerfile.cuda';
      const text = dockerfile({
        endpointId: ep.id,
        hasDependencies: deps.length > 0,
        // onnxruntime-node ships its CUDA provider for linux/x64 only.
        hasOnnxruntime: args.arch === 'x64' && existsSync(join(dir, 'node_modules/onnxruntime-node')),
        variant,
        apt: ep.apt,
        env: deploy.env,
        stopTimeoutS: deploy.stopTimeoutSeconds,
        ...(args.baseImage ? { baseImage: args.baseImage } : {}),
      });
      writeFileSync(join(dir, name), text);
    }
    io.stdout.write(
      `${step}: wrote ${show(io.cwd, dir)}/ (worker.mjs, package.json, ${deps.length ? 'package-lock.json, node_modules, ' : ''}Dockerfile, Dockerfile.cuda, deploy.json, k8s/, .dockerignore)\n`,
    );
  }

  // 3. What next.
  if (failed) return EXIT.failure;
  if (httpBuilt.length)
    io.stdout.write(`\nNext (load-balancing endpoints, their own images):\n${httpBuilt.join('\n')}\n`);
  // The first endpoint that was built (a command or load-balancing one brings its own image).
  const first = endpoints.find((e) => !e.command && !e.http);
  if (first) {
    const dir = show(io.cwd, join(outRoot, first.id));
    io.stdout.write(
      `\nNext:\n  docker build -t ${first.id}-worker ${dir}\n` +
        `  docker run --init --stop-timeout ${deploySettings(first).stopTimeoutSeconds} -e BERTH_URL=<control plane url> -e BERTH_WORKER_TOKEN=<worker token> ${first.id}-worker\n` +
        `Without Docker (dependencies are installed): cd ${dir} && BERTH_URL=... BERTH_WORKER_TOKEN=... BERTH_ENDPOINT_ID=${first.id} node worker.mjs\n`,
    );
  }
  return EXIT.ok;
}

function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}

/** A path relative to `cwd` when it is inside it, else absolute. */
function show(cwd: string, path: string): string {
  const rel = relative(cwd, path);
  return rel === '' ? '.' : rel.startsWith('..') ? path : rel;
}
