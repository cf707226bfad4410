import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findProjectLock, lockPath, lockSubset, LockSubsetError } from './lockfile.js';

/** The CPU architecture of the image (Node's names: `x64`, `arm64`). */
export type TargetArch = 'x64' | 'arm64';

/**
 * Environment for `npm ci` on the build host: onnxruntime-node's postinstall must not download anything (the CPU
 * binaries are in the package; the CUDA image installs its CUDA files explicitly).
 */
export const INSTALL_ENV = {
  ONNXRUNTIME_NODE_INSTALL: 'skip',
  ONNXRUNTIME_NODE_INSTALL_CUDA: 'skip',
  npm_config_update_notifier: 'false',
} as const;

export interface InstallResult {
  /** Where the lock came from. */
  lock: 'project' | 'resolved';
  /** Why the project's lock could not be used, when it could not. */
  lockNote?: string;
  /** The folder whose identical node_modules was copied instead of running npm ci. */
  reused?: string;
  /** Bytes of node_modules before and after pruning. */
  bytesInstalled: number;
  bytesPruned: number;
  ms: number;
}

/**
 * Writes `package-lock.json` into a deployable folder (cut from the project's lock, else resolved by npm) and
 * installs its dependencies there with `npm ci --omit=dev` for `linux/<arch>`, then prunes other platforms'
 * binaries. The Dockerfile then only copies `node_modules`: nothing is downloaded while the image builds.
 *
 * @throws Error with npm's output when npm fails.
 */
export function installDependencies(o: {
  dir: string;
  projectDir: string;
  name: string;
  dependencies: Record<string, string>;
  arch: TargetArch;
  /** Folders installed earlier in this run: one with the same lock is copied instead of installed again. */
  installed?: string[];
}): InstallResult {
  const t0 = performance.now();
  let lock: InstallResult['lock'] = 'resolved';
  let lockNote: string | undefined;
  const found = findProjectLock(o.projectDir);
  if (found) {
    try {
      const subset = lockSubset(found.lock, lockPath(found.root, o.projectDir), o.name, o.dependencies);
      writeFileSync(join(o.dir, 'package-lock.json'), `${JSON.stringify(subset, null, 2)}\n`);
      lock = 'project';
    } catch (err) {
      if (!(err instanceof LockSubsetError)) throw err;
      lockNote = err.message;
    }
  } else lockNote = 'no package-lock.json found in the project';
  const target = ['--os=linux', `--cpu=${o.arch}`, '--libc=glibc'];
  if (lock === 'resolved') npm(o.dir, ['install', '--package-lock-only', '--omit=dev', '--ignore-scripts', ...target]);
  const lockText = readFileSync(join(o.dir, 'package-lock.json'), 'utf8').replace(/"name": "[^"]*"/g, '');
  const same = o.installed?.find(
    (d) =>
      existsSync(join(d, 'node_modules')) &&
      readFileSync(join(d, 'package-lock.json'), 'utf8').replace(/"name": "[^"]*"/g, '') === lockText,
  );
  if (same) {
    cpSync(join(same, 'node_modules'), join(o.dir, 'node_modules'), { recursive: true, verbatimSymlinks: true });
    return {
      lock,
      ...(lockNote ? { lockNote } : {}),
      reused: same,
      bytesInstalled: du(join(o.dir, 'node_modules')),
      bytesPruned: 0,
      ms: Math.round(performance.now() - t0),
    };
  }
  npm(o.dir, ['ci', '--omit=dev', ...target]);
  const bytesInstalled = du(join(o.dir, 'node_modules'));
  pruneForeignBinaries(join(o.dir, 'node_modules'), o.arch);
  const bytesPruned = bytesInstalled - du(join(o.dir, 'node_modules'));
  o.installed?.push(o.dir);
  return {
    lock,
    ...(lockNote ? { lockNote } : {}),
    bytesInstalled,
    bytesPruned,
    ms: Math.round(performance.now() - t0),
  };
}

function npm(cwd: string, args: string[]): void {
  const r = spawnSync(
    'npm',
    [...args, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', '--workspaces=false'],
    {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, ...INSTALL_ENV },
      timeout: 600_000,
    },
  );
  if (r.status !== 0)
    throw new Error(
      `npm ${args[0]} failed in ${cwd} (exit ${r.status ?? r.signal}):\n${(r.stderr || r.stdout || String(r.error ?? '')).trim()}`,
    );
}

/**
 * Removes binaries for other platforms from an installed node_modules: onnxruntime-node ships every
 * OS/arch under `bin/napi-v*\/<os>/<arch>` (only `linux/<arch>` is kept), and musl builds of sharp's
 * `@img/*` packages are dropped on a glibc image.
 */
export function pruneForeignBinaries(nodeModules: string, arch: TargetArch): void {
  for (const pkg of packageDirs(nodeModules)) {
    const base = pkg.slice(pkg.lastIndexOf('node_modules/') + 13);
    if (base === 'onnxruntime-node') {
      const bin = join(pkg, 'bin');
      for (const napi of existsSync(bin) ? readdirSync(bin) : []) {
        for (const os of readdirSync(join(bin, napi))) {
          const osDir = join(bin, napi, os);
          if (os !== 'linux') rmSync(osDir, { recursive: true, force: true });
          else
            for (const a of readdirSync(osDir))
              if (a !== arch) rmSync(join(osDir, a), { recursive: true, force: true });
        }
      }
    } else if (
      /^@img\/sharp-(libvips-)?linuxmusl-/.test(base) ||
      (/^@img\/sharp-/.test(base) && !base.includes(`linux-${arch}`) && base !== '@img/colour')
    ) {
      rmSync(pkg, { recursive: true, force: true });
    }
  }
}

/** Every package folder under a node_modules, nested ones included. */
function packageDirs(nodeModules: string): string[] {
  const out: string[] = [];
  if (!existsSync(nodeModules)) return out;
  for (const name of readdirSync(nodeModules)) {
    if (name.startsWith('.')) continue;
    const dirs = name.startsWith('@')
      ? readdirSync(join(nodeModules, name)).map((n) => join(nodeModules, name, n))
      : [join(nodeModules, name)];
    for (const d of dirs) {
      out.push(d);
      out.push(...packageDirs(join(d, 'node_modules')));
    }
  }
  return out;
}

/** Total bytes of the files under `path`. */
export function du(path: string): number {
  if (!existsSync(path)) return 0;
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  let n = 0;
  for (const e of readdirSync(path)) n += du(join(path, e));
  return n;
}
