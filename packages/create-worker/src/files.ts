import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RENAME, SKIP, TEMPLATE_ENDPOINT } from './templates.js';

/** Copies a template folder, renaming `_gitignore` and friends, skipping node_modules and build output. */
export function copyTemplate(from: string, to: string): string[] {
  const written: string[] = [];
  const walk = (src: string, dst: string, rel: string) => {
    mkdirSync(dst, { recursive: true });
    for (const name of readdirSync(src)) {
      if (SKIP.has(name) && rel === '') continue;
      if (name === 'node_modules') continue;
      const s = join(src, name);
      const target = RENAME[name] ?? name;
      if (statSync(s).isDirectory()) walk(s, join(dst, target), `${rel}${name}/`);
      else {
        copyFileSync(s, join(dst, target));
        written.push(`${rel}${target}`);
      }
    }
  };
  walk(from, to, '');
  return written.sort();
}

/** A valid endpoint id from a folder name: `My Worker!` -> `my-worker`. */
export function endpointIdFrom(name: string): string {
  const id = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return id || 'worker';
}

/** A valid npm package name from a folder name. */
export function packageNameFrom(name: string): string {
  return endpointIdFrom(name).slice(0, 214);
}

interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  [k: string]: unknown;
}

/**
 * Rewrites the copied package.json: the project's name, the template's `allowScripts`, and with `local` the Berth
 * packages as `file:` tarballs (also the ones only needed transitively, so npm never asks a registry for them).
 */
export function rewritePackageJson(
  dir: string,
  name: string,
  allowScripts: Readonly<Record<string, boolean>>,
  local: Record<string, string> | undefined,
): void {
  const file = join(dir, 'package.json');
  const pkg = JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
  pkg.name = name;
  pkg.version = '0.1.0';
  delete pkg['description'];
  if (local) {
    pkg.dependencies ??= {};
    pkg.devDependencies ??= {};
    for (const [dep, spec] of Object.entries(local)) {
      if (dep in (pkg.devDependencies ?? {}) || dep === '@berth/server') pkg.devDependencies[dep] = spec;
      else pkg.dependencies[dep] = spec;
    }
  }
  pkg['allowScripts'] = { ...allowScripts };
  writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
}

/** Renames the template's endpoint in berth.config.json. */
export function rewriteConfig(dir: string, endpointId: string): void {
  const file = join(dir, 'berth.config.json');
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text.replaceAll(`"${TEMPLATE_ENDPOINT}"`, JSON.stringify(endpointId)));
}
