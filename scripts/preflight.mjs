#!/usr/bin/env node
// `npm test`'s preflight (npm runs it as `pretest`, and scripts/test.mjs runs it again for `npm run test:unit`):
// the suite drives real programs: espeak-ng (text-to-speech worker), ffmpeg/ffprobe (video worker, media checks)
// and Chromium (playground). When one is missing: as root with apt-get, install the Debian packages; otherwise
// stop before anything runs with one message naming them. BERTH_SKIP_PREFLIGHT=1 skips the check.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Programs the tests run, and the Debian package that has each. */
export const TOOLS = [
  { command: 'espeak-ng', pkg: 'espeak-ng' },
  { command: 'ffmpeg', pkg: 'ffmpeg' },
  { command: 'ffprobe', pkg: 'ffmpeg' },
  { command: 'chromium', pkg: 'chromium' },
];

/** Whether `command` is an executable file in one of the PATH folders. */
export function onPath(command, path = process.env.PATH ?? '') {
  return path.split(delimiter).some((dir) => {
    if (!dir) return false;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The Debian packages of the missing programs (each once, in TOOLS order). */
export const missingPackages = (path) => [...new Set(TOOLS.filter((t) => !onPath(t.command, path)).map((t) => t.pkg))];

const message = (pkgs) =>
  `npm test needs programs that are not installed: ${pkgs.join(', ')} (the audio, video and playground tests run them).\n` +
  `Install the Debian/Ubuntu packages first:  sudo apt-get install -y --no-install-recommends ${pkgs.join(' ')}\n` +
  `(as root with apt-get, npm test installs them itself; BERTH_SKIP_PREFLIGHT=1 skips this check)`;

/** Checks, installs when it can; returns the exit code (0: everything is there). */
export function preflight({ env = process.env, log = console.log, error = console.error } = {}) {
  if (env.BERTH_SKIP_PREFLIGHT === '1') return 0;
  const path = env.PATH ?? '';
  let pkgs = missingPackages(path);
  if (pkgs.length === 0) return 0;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (root && onPath('apt-get', path)) {
    log(`npm test: installing ${pkgs.join(' ')} with apt-get (the tests run them)`);
    const opts = { stdio: ['ignore', 'inherit', 'inherit'], env: { ...env, DEBIAN_FRONTEND: 'noninteractive' } };
    const update = spawnSync('apt-get', ['update', '-qq'], opts);
    const install =
      update.status === 0
        ? spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], opts)
        : update;
    if (install.status === 0) pkgs = missingPackages(path);
    if (pkgs.length === 0) return 0;
    error(`apt-get could not install them (exit code ${install.status}).`);
  }
  error(message(pkgs));
  return 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exit(preflight());
