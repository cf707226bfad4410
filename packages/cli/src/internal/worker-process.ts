import { spawn, type ChildProcess } from 'node:child_process';
import type { LogFormat } from '@berth/protocol/log';
import { createInterface } from 'node:readline';
import { killGroup, trackGroup } from './process-group.js';
import type { WorkerSpec } from './supervisor-types.js';
import { workerLine } from './worker-line.js';

interface Output {
  /** `node --import <loaderUrl> <file>` runs a handler file. */
  loaderUrl: string;
  /** Put before each line the worker prints (`[<endpoint>/<workerId>]`). */
  prefix: string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** See `SupervisorOptions.logFormat`. */
  logFormat?: LogFormat | undefined;
  color: boolean;
}

/**
 * Starts one worker process: `node --import tsx <file>`, or the spec's command in its own process group. Each
 * output line goes out prefixed; `onEnd` is called once, when the process has exited and its pipes closed, or
 * when it could not start.
 */
export function spawnWorker(
  spec: WorkerSpec,
  out: Output,
  onEnd: (code: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => void,
): ChildProcess {
  const [program, args] = spec.command
    ? [spec.command[0]!, spec.command.slice(1)]
    : [process.execPath, ['--import', out.loaderUrl, spec.file]];
  const child = spawn(program, args, {
    cwd: spec.cwd,
    env: spec.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: spec.command !== undefined,
  });
  if (spec.command && child.pid !== undefined) trackGroup(child.pid);

  const pipe = (stream: NodeJS.ReadableStream | null, to: NodeJS.WritableStream) => {
    if (!stream) return;
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      if (out.logFormat === 'json' && line.startsWith('{"level":')) return void to.write(`${line}\n`);
      const { text, level } = workerLine(line, out.color);
      const dest = level === undefined ? to : level === 'warn' || level === 'error' ? out.stderr : out.stdout;
      dest.write(`${out.prefix} ${text}\n`);
    });
  };
  pipe(child.stdout, out.stdout);
  pipe(child.stderr, out.stderr);
  if (child.pid !== undefined) out.stdout.write(`${out.prefix} worker started (pid ${child.pid})\n`);

  let reported = false;
  const end = (code: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
    if (reported) return;
    reported = true;
    onEnd(code, signal, spawnError);
  };
  child.once('error', (err) => end(null, null, err));
  child.once('close', (code, signal) => end(code, signal));
  // The rest of a command worker's group (runpod-python's heartbeat) goes with it; its pipes close then.
  if (spec.command) child.once('exit', () => killGroup(child.pid, 'SIGKILL'));
  return child;
}

/** How a worker process ended, for the log line ("was killed by SIGKILL"). */
export function exitText(code: number | null, signal: NodeJS.Signals | null, spawnError?: Error): string {
  if (spawnError) return `could not start: ${spawnError.message}`;
  if (signal) return `was killed by ${signal}`;
  if (code === 0) return 'exited with code 0 (does it call start() from @berth/worker?)';
  return `exited with code ${code}`;
}
