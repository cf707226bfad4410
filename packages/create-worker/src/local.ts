import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The workspace packages a generated project needs, dependencies first. */
export const BERTH_PACKAGES = ['protocol', 'client', 'worker', 'server', 'cli'] as const;

/**
 * Packs the Berth packages of a local checkout (`npm pack`, their dist/ must be built) into `<project>/vendor/`
 * and returns `file:` specs by package name, so that the project installs without Berth on a registry.
 *
 * @throws Error naming what to do when `repo` is not a built Berth checkout.
 */
export function packLocal(repo: string, project: string): Record<string, string> {
  const root = resolve(repo);
  const dirs = BERTH_PACKAGES.map((p) => join(root, 'packages', p));
  for (const dir of dirs) {
    if (!existsSync(join(dir, 'package.json')))
      throw new Error(`--local ${repo}: ${dir} is missing; is it a Berth checkout?`);
    if (!existsSync(join(dir, 'dist')))
      throw new Error(`--local ${repo}: ${dir}/dist is missing; run \`npm run build\` in ${root} first`);
  }
  const vendor = join(project, 'vendor');
  mkdirSync(vendor, { recursive: true });
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', vendor, ...dirs], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const packed = JSON.parse(out) as { name: string; filename: string }[];
  const specs: Record<string, string> = {};
  for (const p of packed) specs[p.name] = `file:vendor/${p.filename.replace(/^.*\//, '')}`;
  return specs;
}

/** `name@version` of each package in a local checkout (shown in the summary). */
export function localVersions(repo: string): string[] {
  return BERTH_PACKAGES.map((p) => {
    const pkg = JSON.parse(readFileSync(join(resolve(repo), 'packages', p, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    return `${pkg.name}@${pkg.version}`;
  });
}
