import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './harness.test-helpers.js';

// scripts/preflight.mjs (npm test's pretest) as a real process with a PATH made for each case: programs are empty
// executables, apt-get a shell script that logs its arguments (and "installs" by creating the programs).
const SCRIPT = join(REPO_ROOT, 'scripts/preflight.mjs');
const work = mkdtempSync(join(tmpdir(), 'berth-preflight-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;

function binDir(programs: string[], aptGet?: 'installs' | 'fails'): { bin: string; log: string } {
  const bin = join(work, `bin${++n}`);
  const log = join(work, `apt${n}.log`);
  mkdirSync(bin);
  const exe = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  for (const p of programs) exe(p, 'exit 0');
  if (aptGet === 'installs') {
    exe(
      'apt-get',
      `echo "$@" >> ${log}\nif [ "$1" = install ]; then for t in espeak-ng ffmpeg ffprobe chromium; do printf '#!/bin/sh\\n' > ${bin}/$t; /bin/chmod +x ${bin}/$t; done; fi`,
    );
  } else if (aptGet === 'fails') exe('apt-get', `echo "$@" >> ${log}\nexit 100`);
  return { bin, log };
}
const preflight = (bin: string, env: Record<string, string> = {}) => {
  const r = spawnSync(process.execPath, [SCRIPT], { env: { PATH: bin, ...env }, encoding: 'utf8', timeout: 10_000 });
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
    const r = preflight(binDir(['espeak-ng', 'ffmpeg', 'ffprobe', 'chromium']).bin);
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('missing programs and no apt-get: exit 1 with one message naming the Debian packages', () => {
    const r = preflight(binDir(['chromium', 'ffmpeg']).bin); // ffprobe missing: its package is ffmpeg
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('npm test needs programs that are not installed: espeak-ng, ffmpeg (');
    expect(r.stderr).toContain('sudo apt-get install -y --no-install-recommends espeak-ng ffmpeg\n');
    expect(r.stderr.match(/npm test needs/g)).toHaveLength(1);
  });

  it('BERTH_SKIP_PREFLIGHT=1 skips the check', () => {
    expect(preflight(binDir([]).bin, { BERTH_SKIP_PREFLIGHT: '1' }).code).toBe(0);
  });

  describe.runIf(isRoot)(`as root with apt-get${isRoot ? '' : ' (skipped: needs uid 0)'}`, () => {
    it('installs the missing packages, checks again: exit 0', () => {
      const { bin, log } = binDir(['chromium'], 'installs');
      const r = preflight(bin);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('npm test: installing espeak-ng ffmpeg with apt-get');
      expect(readFileSync(log, 'utf8')).toBe('update -qq\ninstall -y -qq --no-install-recommends espeak-ng ffmpeg\n');
    });

    it('apt-get fails: exit 1 with the same message', () => {
      const { bin, log } = binDir([], 'fails');
      const r = preflight(bin);
      expect(r.code).toBe(1);
      expect(readFileSync(log, 'utf8')).toBe('update -qq\n');
      expect(r.stderr).toContain('sudo apt-get install -y --no-install-recommends espeak-ng ffmpeg chromium');
    });
  });
});
