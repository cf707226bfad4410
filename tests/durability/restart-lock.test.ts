import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT } from '../e2e/harness.test-helpers.js';
import { API_KEY, WORKER_TOKEN, ServeProcess, api, killAll } from './cluster.test-helpers.js';

// Issue #16 item 7: the data folder's lock is held by the operating system, so `kill -9` of the control plane's
// process group followed at once by a restart on the same --data-dir always succeeds, even while the killed
// process is still an unreaped zombie (its parent died with it, and PID 1 reaps it whenever it gets to it).
const RESTARTS = 5;
const dir = mkdtempSync(join(tmpdir(), 'berth-restart-lock-'));
afterAll(async () => {
  for (const pid of holders)
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * `berth serve` in a process group of its own (setsid) whose parent is a process that never reaps children (the
 * shell execs `sleep`), as under a container's PID 1 that reaps late: once killed, berth serve stays a zombie.
 */
async function startGroup(port: number, dataDir: string): Promise<{ serve: ServeProcess; pid: number }> {
  const cmd = `setsid "${process.execPath}" "${BIN}" serve --port ${port} --data-dir "${dataDir}" --endpoint rec & echo "serve-pid $!"; exec sleep 300`;
  const child = spawn('/bin/sh', ['-c', cmd], {
    cwd: REPO_ROOT,
    detached: true,
    env: {
      ...process.env,
      BERTH_API_KEY: API_KEY,
      BERTH_WORKER_TOKEN: WORKER_TOKEN,
      NO_COLOR: '1',
      BERTH_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  holders.push(child.pid!);
  const serve = new ServeProcess(child);
  await serve.ready();
  return { serve, pid: Number(/serve-pid (\d+)/.exec(serve.text)?.[1]) };
}

const holders: number[] = [];
const state = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0]!;
  } catch {
    return 'gone';
  }
};

describe('data folder lock', () => {
  it(`restarts at once after kill -9 of the process group, ${RESTARTS} times in a row; a second live server is refused`, {
    timeout: 120_000,
  }, async () => {
    const dataDir = join(dir, 'data');
    let { serve, pid } = await startGroup(0, dataDir);
    const port = serve.port; // the OS picked it; every restart binds it again
    const base = `http://127.0.0.1:${port}`;
    const ids: string[] = [];
    for (let i = 0; i < RESTARTS; i++) {
      const r = await api(base, 'POST', '/v2/rec/run', { input: { i } });
      expect(r.status).toBe(200);
      ids.push(r.json['id'] as string);
      process.kill(-pid, 'SIGKILL'); // berth serve's whole process group
      await until(() => state(pid) === 'Z', `pid ${pid} to die`);
      ({ serve, pid } = await startGroup(port, dataDir)); // at once, while the old one is still a zombie
      expect(serve.text).not.toMatch(/in use by another/);
    }
    for (const id of ids) expect((await api(base, 'GET', `/v2/rec/status/${id}`)).json['status']).toBe('IN_QUEUE');

    // A second live control plane on the same folder is still refused, with a message naming the owner.
    const other = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--endpoint', 'rec'], {
      cwd: REPO_ROOT,
      env: { ...process.env, BERTH_API_KEY: API_KEY, BERTH_WORKER_TOKEN: WORKER_TOKEN, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    other.stdout.on('data', (d: Buffer) => (text += d.toString()));
    other.stderr.on('data', (d: Buffer) => (text += d.toString()));
    const code = await new Promise<number | null>((r) => other.once('exit', (c) => r(c)));
    expect(code).not.toBe(0);
    expect(text).toMatch(/in use by another Berth control plane \(pid \d+\)/);
    process.kill(-pid, 'SIGKILL');
  });
});

async function until(ok: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 5000;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
