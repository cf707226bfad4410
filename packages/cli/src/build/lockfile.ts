import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

/** One `packages` entry of an npm lock file (v2/v3). */
export interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  optional?: boolean;
  [field: string]: unknown;
}

export interface LockFile {
  name?: string;
  lockfileVersion: number;
  requires?: boolean;
  packages: Record<string, LockEntry>;
}

/** The project's `package-lock.json`: the nearest one from `dir` upwards, with the folder it sits in. */
export function findProjectLock(dir: string): { file: string; root: string; lock: LockFile } | undefined {
  for (let d = dir; ; d = dirname(d)) {
    const file = join(d, 'package-lock.json');
    if (existsSync(file)) {
      const lock = JSON.parse(readFileSync(file, 'utf8')) as LockFile;
      return lock.lockfileVersion >= 2 && lock.packages ? { file, root: d, lock } : undefined;
    }
    if (dirname(d) === d) return undefined;
  }
}

/** `a/node_modules/b` -> `a`; `examples/x` -> `examples`; `` stays ``. */
function parentDir(path: string): string | undefined {
  if (path === '') return undefined;
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/** The lock key Node would load `name` from when required by the package at `from` (a lock key). */
function resolveKey(packages: Record<string, LockEntry>, name: string, from: string): string | undefined {
  for (let d: string | undefined = from; d !== undefined; d = parentDir(d)) {
    if (d.endsWith('/node_modules') || d === 'node_modules') continue;
    const key = d === '' ? `node_modules/${name}` : `${d}/node_modules/${name}`;
    if (packages[key]) return key;
  }
  return undefined;
}

/** Why a lock could not be derived; `berth build` then resolves the dependencies itself (`npm install --package-lock-only`). */
export class LockSubsetError extends Error {
  override readonly name = 'LockSubsetError';
}

/**
 * A lock file for a folder whose package.json declares exactly `dependencies` (name -> installed version), cut
 * out of the project's lock: the same versions, integrity hashes and tree shape the project installed, every
 * platform's optional binaries included (`npm ci` picks the target's). `projectDir` is the folder the
 * dependencies were resolved from.
 *
 * @throws LockSubsetError when a dependency is not in the lock, is a workspace link, or two copies would land on one path.
 * @example lockSubset(found.lock, relative(found.root, config.dir), 'echo-worker', { sharp: '0.35.5' })
 */
export function lockSubset(
  lock: LockFile,
  projectDir: string,
  name: string,
  dependencies: Record<string, string>,
): LockFile {
  const from = projectDir.split(sep).join('/');
  const src = lock.packages;
  const out: Record<string, LockEntry> = { '': { name, dependencies: { ...dependencies } } };
  /** Output key -> source key, to detect two different copies mapped to one place. */
  const placed = new Map<string, string>();
  const required = new Set<string>();
  const queue: { key: string; optional: boolean }[] = [];

  const visit = (dep: string, fromKey: string, optional: boolean, what: string): void => {
    const key = resolveKey(src, dep, fromKey);
    if (!key) {
      if (optional) return;
      throw new LockSubsetError(`${dep} (needed by ${what}) is not in the project's package-lock.json`);
    }
    if (src[key]?.link) throw new LockSubsetError(`${dep} is a workspace link (${key}), not an installed package`);
    queue.push({ key, optional });
  };
  for (const dep of Object.keys(dependencies)) visit(dep, from, false, 'the worker');

  while (queue.length) {
    const { key, optional } = queue.shift()!;
    // Where it goes in the build folder: the part from the first node_modules/ under the folder it resolved in.
    const at = key.indexOf('node_modules/');
    const target = key.slice(at);
    const prev = placed.get(target);
    if (prev !== undefined && prev !== key && src[prev]?.version !== src[key]?.version) {
      throw new LockSubsetError(
        `two versions of ${target.slice(target.lastIndexOf('node_modules/') + 13)} would share ${target}`,
      );
    }
    if (!optional) required.add(target);
    if (prev !== undefined) continue;
    placed.set(target, key);
    const entry = src[key]!;
    const copy: LockEntry = {};
    for (const [k, v] of Object.entries(entry))
      if (!['dev', 'devOptional', 'optional', 'peer', 'extraneous', 'inBundle'].includes(k)) copy[k] = v;
    out[target] = copy;
    const pkg = target.slice(target.lastIndexOf('node_modules/') + 13);
    for (const dep of Object.keys(entry.dependencies ?? {})) visit(dep, key, optional, pkg);
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) visit(dep, key, true, pkg);
    for (const dep of Object.keys(entry.peerDependencies ?? {}))
      visit(dep, key, optional || entry.peerDependenciesMeta?.[dep]?.optional === true, pkg);
  }
  for (const [target, entry] of Object.entries(out)) if (target !== '' && !required.has(target)) entry.optional = true;
  const sorted: Record<string, LockEntry> = {};
  for (const k of Object.keys(out).sort()) sorted[k] = out[k]!;
  return { name, lockfileVersion: 3, requires: true, packages: sorted };
}

/** `relative()` from the lock's folder to the project folder, with `/` separators. */
export function lockPath(lockRoot: string, projectDir: string): string {
  return relative(lockRoot, projectDir).split(sep).join('/');
}
