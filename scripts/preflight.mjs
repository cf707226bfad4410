#!/usr/bin/env node
// `npm test`'s preflight (npm runs it as `pretest`, and scripts/test.mjs runs it again for `npm run test:unit`).
// The suite drives real programs; this is the one place that knows which, and the Debian package of each:
// espeak-ng (text-to-speech worker), ffmpeg/ffprobe (video worker, media checks), Chromium (playground and
// browser tests), curl (the README's walkthrough, run verbatim), Debian's python3 with runpod-python's python3-*
// dependencies (unmodified runpod-python workers), docker.io and debootstrap (worker image tests: they start their
// own dockerd and make the base image stand-in). When something is missing: as root with apt-get, install the
// packages; otherwise stop before anything runs with one message naming every package.
// BERTH_SKIP_PREFLIGHT=1 skips the check (tests that need a missing program then skip and say why).
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Programs the tests run, the Debian package that has each, and what runs it. */
export const TOOLS = [
  { command: 'espeak-ng', pkg: 'espeak-ng', why: 'audio worker' },
  { command: 'ffmpeg', pkg: 'ffmpeg', why: 'video worker' },
  { command: 'ffprobe', pkg: 'ffmpeg', why: 'media checks' },
  { command: 'chromium', pkg: 'chromium', why: 'playground and browser tests' },
  { command: 'curl', pkg: 'curl', why: "the README's curl walkthrough" },
  { command: 'dockerd', pkg: 'docker.io', why: 'worker image tests' },
  { command: 'docker', pkg: 'docker.io', why: 'worker image tests' },
  { command: 'debootstrap', pkg: 'debootstrap', why: 'the base image stand-in' },
];

/** Debian's interpreter, which the runpod-python tests run (BERTH_PYTHON overrides it, for tests of this file). */
const PYTHON = '/usr/bin/python3';

/** runpod-python's dependencies that Debian packages (the newer ones come with ../shared/vendor/runpod-python). */
export const PYTHON_MODULES = [
  { module: 'multidict', pkg: 'python3-multidict' },
  { module: 'frozenlist', pkg: 'python3-frozenlist' },
  { module: 'attr', pkg: 'python3-attr' },
  { module: 'idna', pkg: 'python3-idna' },
  { module: 'requests', pkg: 'python3-requests' },
  { module: 'urllib3', pkg: 'python3-urllib3' },
  { module: 'backoff', pkg: 'python3-backoff' },
  { module: 'cpuinfo', pkg: 'python3-cpuinfo' },
  { module: 'tomli', pkg: 'python3-tomli' },
  { module: 'tomlkit', pkg: 'python3-tomlkit' },
  { module: 'paramiko', pkg: 'python3-paramiko' },
  // The load-balancing endpoint tests run a worker in the shape of RunPod's template (FastAPI under uvicorn).
  { module: 'fastapi', pkg: 'python3-fastapi' },
  { module: 'uvicorn', pkg: 'python3-uvicorn' },
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

/** The python3-* packages whose modules `python` cannot import (python3 itself when there is no interpreter). */
function missingPythonPackages(python, path) {
  const probe = `import importlib.util as u\nfor m in ${JSON.stringify(PYTHON_MODULES.map((m) => m.module))}:\n  u.find_spec(m) or print(m)`;
  const r = spawnSync(python, ['-c', probe], { encoding: 'utf8', env: { PATH: path }, timeout: 30_000 });
  if (r.error || r.status !== 0) return ['python3', ...PYTHON_MODULES.map((m) => m.pkg)];
  const missing = new Set(r.stdout.split('\n').filter(Boolean));
  return PYTHON_MODULES.filter((m) => missing.has(m.module)).map((m) => m.pkg);
}

/** The Debian packages of everything missing (each once, in TOOLS then PYTHON_MODULES order). */
export function missingPackages(path, python = PYTHON) {
  const tools = TOOLS.filter((t) => !onPath(t.command, path)).map((t) => t.pkg);
  return [...new Set([...tools, ...missingPythonPackages(python, path)])];
}

const message = (pkgs) =>
  `npm test needs programs that are not installed: ${pkgs.join(', ')} (the suite runs them for real: scripts/preflight.mjs says which test needs which).\n` +
  `Install the Debian/Ubuntu packages first:  sudo apt-get install -y --no-install-recommends ${pkgs.join(' ')}\n` +
  `(as root with apt-get, npm test installs them itself; BERTH_SKIP_PREFLIGHT=1 skips this check, and the tests that need them skip)`;

/** Checks, installs when it can; returns the exit code (0: everything is there). */
export function preflight({ env = process.env, log = console.log, error = console.error } = {}) {
  if (env.BERTH_SKIP_PREFLIGHT === '1') return 0;
  const path = env.PATH ?? '';
  const python = env.BERTH_PYTHON ?? PYTHON;
  let pkgs = missingPackages(path, python);
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
    if (install.status === 0) pkgs = missingPackages(path, python);
    if (pkgs.length === 0) return 0;
    error(`apt-get could not install them (exit code ${install.status}).`);
  }
  error(message(pkgs));
  return 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exit(preflight());
