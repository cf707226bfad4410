#!/usr/bin/env node
// `npm run create -- <dir> [--template basic|text|image] [--no-install] [--force]`: create-worker from this
// checkout, with no registry holding Berth. Builds the packages (tsc -b: quick when up to date), then runs
// packages/create-worker with `--local <this checkout>`, so the project depends on the packages packed from here
// (vendor/*.tgz). <dir> is relative to the folder npm was run from (INIT_CWD), not to the repository.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const cwd = process.env.INIT_CWD || process.cwd();
const help = args.includes('--help') || args.includes('-h');

if (!help) {
  console.log('Building the Berth packages (npm run build)...');
  const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
  const pkgs = ['protocol', 'worker', 'server', 'cli', 'create-worker'].map((p) => `packages/${p}`);
  const b = spawnSync(process.execPath, [tsc, '-b', ...pkgs], { cwd: repo, stdio: 'inherit' });
  if (b.status !== 0) {
    console.error('create: the build failed (see above); run `npm install` in the repository first');
    process.exit(b.status ?? 1);
  }
}
const local = args.some((a) => a === '--local' || a.startsWith('--local=')) ? [] : ['--local', repo];
const bin = fileURLToPath(new URL('../packages/create-worker/bin/create-worker.js', import.meta.url));
const r = spawnSync(process.execPath, [bin, ...args, ...(help ? [] : local)], { cwd, stdio: 'inherit' });
process.exit(r.status ?? 1);
