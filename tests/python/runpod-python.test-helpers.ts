import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runpodWorkerEnv } from '@berth/protocol';

/** Debian's interpreter: apt installs runpod-python's python3-* dependencies for it. */
export const PYTHON = '/usr/bin/python3';
/** The unmodified runpod-python 1.12.0 (../shared/vendor/runpod-python); BERTH_RUNPOD_PYTHONPATH overrides it. */
export const RUNPOD_SITE =
  process.env['BERTH_RUNPOD_PYTHONPATH'] ??
  fileURLToPath(new URL('../../../shared/vendor/runpod-python/site-packages', import.meta.url));
export const HANDLERS_PY = fileURLToPath(new URL('./fixtures/handlers.py', import.meta.url));

/** runpod-python on its pure-Python dependencies (the vendored aiohttp, yarl and propcache have no C builds). */
export const PURE_PYTHON = {
  PYTHONPATH: RUNPOD_SITE,
  PYTHONDONTWRITEBYTECODE: '1',
  AIOHTTP_NO_EXTENSIONS: '1',
  YARL_NO_EXTENSIONS: '1',
  PROPCACHE_NO_EXTENSIONS: '1',
};

/** Why the runpod-python tests cannot run here, or undefined when they can. */
export function runpodSkipReason(): string | undefined {
  if (!existsSync(PYTHON))
    return `${PYTHON} is missing (install Debian's python3 and runpod-python's python3-* packages)`;
  if (!existsSync(join(RUNPOD_SITE, 'runpod')))
    return `runpod-python is missing: no ${RUNPOD_SITE}/runpod (set BERTH_RUNPOD_PYTHONPATH)`;
  const r = spawnSync(PYTHON, ['-c', 'import runpod'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...PURE_PYTHON },
  });
  if (r.status !== 0) {
    const last = (r.stderr ?? '').trim().split('\n').at(-1) ?? `exit code ${r.status}`;
    return `\`import runpod\` fails (${last}): npm test's preflight installs runpod-python's python3-* packages`;
  }
  return undefined;
}

/** The environment RunPod gives a worker, pointed at a Berth control plane (`base` = http://127.0.0.1:port). */
export const runpodEnv = runpodWorkerEnv;

/**
 * A worker process in its own process group, with a clean HOME: by default the unmodified runpod-python worker
 * running `script`; `argv` runs another program instead (a Berth worker in RunPod mode).
 */
export class PyWorker {
  readonly child: ChildProcess;
  output = '';
  private readonly home: string;
  readonly exited: Promise<void>;

  constructor(env: Record<string, string>, script = HANDLERS_PY, argv: string[] = [PYTHON, script]) {
    this.home = mkdtempSync(join(tmpdir(), 'berth-py-'));
    this.child = spawn(argv[0]!, argv.slice(1), {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: this.home,
        ...PURE_PYTHON,
        ...env,
      },
    });
    for (const s of [this.child.stdout, this.child.stderr])
      s?.setEncoding('utf8').on('data', (d: string) => (this.output += d));
    // 'exit', not 'close': an orphaned heartbeat child keeps the output pipes open.
    this.exited = new Promise((r) => this.child.once('exit', () => r()));
  }

  /** Kills the main process only (its heartbeat child keeps pinging, as after an OOM kill). */
  killMain(): void {
    this.child.kill('SIGKILL');
  }

  /** Kills the whole process group and removes the temporary HOME. */
  async stop(): Promise<void> {
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 2000))]);
    rmSync(this.home, { recursive: true, force: true });
  }
}
