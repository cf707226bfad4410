import { PassThrough } from 'node:stream';
import { main } from '../cli.js';
import type { Io } from './io.js';

/** An `Io` whose stdout and stderr are collected in memory. */
export function captureIo(
  env: NodeJS.ProcessEnv = {},
  cwd = '/nonexistent',
): { io: Io; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  return { io: { stdout, stderr, env, cwd }, out: () => out, err: () => err };
}

/** Runs `berth <argv>` in this process: its exit code and what it printed. */
export async function runBerth(
  argv: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ code: number; out: string; err: string }> {
  const c = captureIo(env, cwd);
  const code = await main(argv, c.io);
  return { code, out: c.out(), err: c.err() };
}
