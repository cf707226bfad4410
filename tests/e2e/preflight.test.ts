import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './harness.test-helpers.js';

// scripts/preflight.mjs (npm test's pretest) as a real process with a PATH made for each case: programs are empty
// executables, apt-get a shell script that logs its arguments (and "installs" by creating the programs), and
// BERTH_PYTHON a script standing for Debian's python3 that prints the modules it cannot import (the file `missing`).
const SCRIPT = join(REPO_ROOT, 'scripts/preflight.mjs');
const work = mkdtempSync(join(tmpdir(), 'berth-preflight-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;

const ALL = ['espeak-ng', 'ffmpeg', 'ffprobe', 'chromium', 'curl', 'dockerd', 'docker', 'debootstrap'];

function binDir(
  programs: string[],
  aptGet?: 'installs' | 'fails',
  missingModules: string[] = [],
): { bin: string; log: string } {
  const bin = join(work, `bin${++n}`);
  const log = join(work, `apt${n}.log`);
  mkdirSync(bin);
  const exe = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  for (const p of programs) exe(p, 'exit 0');
  writeFileSync(join(bin, 'missing'), missingModules.join('\n'));
  exe('python3', `/bin/cat ${bin}/missing`);
  if (aptGet === 'installs') {
    exe(
      'apt-get',
      `echo "$@" >> ${log}\nif [ "$1" = install ]; then for t in ${ALL.join(' ')}; do printf '#!/bin/sh\\n' > ${bin}/$t; /bin/chmod +x ${bin}/$t; done; : > ${bin}/missing; fi`,
    );
  } else if (aptGet === 'fails') exe('apt-get', `echo "$@" >> ${log}\nexit 100`);
  return { bin, log };
}
const preflight = (bin: string, env: Record<string, string> = {}) => {
  const r = spawnSync(process.execPath, [SCRIPT], {
    env: { PATH: bin, BERTH_PYTHON: join(bin, 'python3'), ...env },
    encoding: 'utf8',
    timeout: 10_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
const isRoot = process.getuid?.() === 0;

describe('npm test preflight (scripts/preflight.mjs)', () => {
  it("is npm test's pretest, and scripts/test.mjs runs it too", () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(pkg.scripts.pretest).toBe('node scripts/preflight.mjs');
    expect(readFileSync(join(REPO_ROOT, 'scripts/test.mjs'), 'utf8')).toMatch(/preflight\(\)/);
  });

  it('everything there: exit 0, prints nothing', () => {
    const r = preflight(binDir(ALL).bin);
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it("names runpod-python's missing python3-* packages, and python3 itself when there is no interpreter", () => {
    const r = preflight(binDir(ALL, undefined, ['backoff', 'requests']).bin);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('sudo apt-get install -y --no-install-recommends python3-requests python3-backoff\n');
    const none = preflight(binDir(ALL).bin, { BERTH_PYTHON: join(work, 'no-such-python') });
    expect(none.stderr).toMatch(
      /--no-install-recommends python3 python3-multidict .* python3-paramiko python3-fastapi python3-uvicorn\n/,
    );
  });

  it('missing programs and no apt-get: exit 1 with one message naming the Debian packages', () => {
    // ffprobe missing: its package is ffmpeg; docker missing, dockerd there: docker.io once
    const r = preflight(binDir(['chromium', 'ffmpeg', 'dockerd', 'debootstrap'], undefined, ['tomli']).bin);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'npm test needs programs that are not installed: espeak-ng, ffmpeg, curl, docker.io, python3-tomli (',
    );
    expect(r.stderr).toContain(
      'sudo apt-get install -y --no-install-recommends espeak-ng ffmpeg curl docker.io python3-tomli\n',
    );
    expect(r.stderr.match(/npm test needs/g)).toHaveLength(1);
  });

  it('BERTH_SKIP_PREFLIGHT=1 skips the check', () => {
    expect(preflight(binDir([]).bin, { BERTH_SKIP_PREFLIGHT: '1' }).code).toBe(0);
  });

  describe.runIf(isRoot)(`as root with apt-get${isRoot ? '' : ' (skipped: needs uid 0)'}`, () => {
    it('installs the missing packages, checks again: exit 0', () => {
      const { bin, log } = binDir(['chromium', 'curl', 'docker', 'dockerd', 'debootstrap'], 'installs', ['paramiko']);
      const r = preflight(bin);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('npm test: installing espeak-ng ffmpeg python3-paramiko with apt-get');
      expect(readFileSync(log, 'utf8')).toBe(
        'update -qq\ninstall -y -qq --no-install-recommends espeak-ng ffmpeg python3-paramiko\n',
      );
    });

    it('apt-get fails: exit 1 with the same message', () => {
      const { bin, log } = binDir([], 'fails');
      const r = preflight(bin);
      expect(r.code).toBe(1);
      expect(readFileSync(log, 'utf8')).toBe('update -qq\n');
      expect(r.stderr).toContain(
        'sudo apt-get install -y --no-install-recommends espeak-ng ffmpeg chromium curl docker.io debootstrap\n',
      );
    });
  });
});
