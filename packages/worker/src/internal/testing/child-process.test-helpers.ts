import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const FIXTURE = fileURLToPath(new URL('./child-worker.test-helpers.ts', import.meta.url));

export interface ChildWorker extends AsyncDisposable {
  readonly proc: ChildProcess;
  stdout: string;
  stderr: string;
  /** Resolves with the exit code (or the signal that killed it). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once stderr contains `text`. */
  waitForStderr(text: string, timeoutMs?: number): Promise<void>;
}

/**
 * Spawns the worker fixture in a real Node process (through tsx). The environment is exactly `env` plus PATH,
 * so no BERTH_* variable leaks in from the test runner. Disposing kills it if it is still running.
 *
 * @example await using child = spawnWorker({ BERTH_URL: cp.baseUrl, ... }); expect((await child.exited).code).toBe(0);
 */
export function spawnWorker(env: Record<string, string>, args: string[] = [], cwd?: string): ChildWorker {
  const proc = spawn(process.execPath, ['--import', TSX, FIXTURE, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const child: ChildWorker = {
    proc,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal }))),
    waitForStderr(text, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!child.stderr.includes(text)) return;
          clearTimeout(timer);
          proc.stderr?.off('data', check);
          resolve();
        };
        const timer = setTimeout(() => {
          proc.stderr?.off('data', check);
          reject(new Error(`stderr never contained ${JSON.stringify(text)}:\n${child.stderr}`));
        }, timeoutMs);
        proc.stderr?.on('data', check);
        check();
      });
    },
    async [Symbol.asyncDispose]() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGKILL');
        await child.exited;
      }
    },
  };
  proc.stdout?.setEncoding('utf8').on('data', (d: string) => (child.stdout += d));
  proc.stderr?.setEncoding('utf8').on('data', (d: string) => (child.stderr += d));
  return child;
}
