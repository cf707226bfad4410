import { spawn } from 'node:child_process';

/** A child process that exited badly (or could not start). `stderr` holds the end of its error output. */
export class ProcessError extends Error {
  readonly code = 'process_failed';
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'ProcessError';
  }
}

/** Options of `runProcess`. */
export interface RunOptions {
  /** Written to the child's stdin, which is then closed. */
  stdin?: Uint8Array | string;
  /** Kills the child (SIGKILL) and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Largest stdout accepted; more kills the child. Default 200 MB. */
  maxOutputBytes?: number;
}

/**
 * Runs `command args` without a shell and resolves with its stdout once it exits with status 0.
 *
 * @throws ProcessError naming the command, its exit status and the end of its stderr; the signal's reason when aborted.
 * @example const wav = await runProcess('espeak-ng', ['-v', 'en-us', '--stdout'], { stdin: 'Hello' });
 */
export function runProcess(command: string, args: readonly string[], options: RunOptions = {}): Promise<Buffer> {
  const max = options.maxOutputBytes ?? 200 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    options.signal?.throwIfAborted();
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let failure: unknown;
    const onAbort = () => {
      failure = options.signal?.reason;
      child.kill('SIGKILL');
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        failure ??= new ProcessError(`${command} wrote more than ${max} bytes`, stderr);
        child.kill('SIGKILL');
      } else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
    child.stdin.on('error', () => undefined); // EPIPE when the child exits early: its exit status says why
    child.once('error', (err) => {
      options.signal?.removeEventListener('abort', onAbort);
      reject(new ProcessError(`cannot run ${command}: ${err.message}`, stderr));
    });
    child.once('close', (code, sig) => {
      options.signal?.removeEventListener('abort', onAbort);
      if (failure !== undefined) reject(failure);
      else if (code === 0) resolve(Buffer.concat(out));
      else
        reject(
          new ProcessError(
            `${command} exited with ${code ?? sig}: ${stderr.trim().split('\n').slice(-3).join(' / ') || 'no error output'}`,
            stderr,
          ),
        );
    });
    child.stdin.end(options.stdin ?? '');
  });
}
