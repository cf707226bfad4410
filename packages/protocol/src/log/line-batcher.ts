/** Flushers of every batcher with lines waiting, run at process exit. */
const pending = new Set<() => void>();
let exitHooked = false;

/**
 * Gathers lines written in one turn of the event loop and hands them to `write` as one chunk (in a `setImmediate`):
 * a busy process writes a few large chunks instead of a syscall per line. What is still waiting when the process
 * exits (`process.exit`, an uncaught error, the loop running dry) is written then; a SIGKILL loses at most one turn.
 *
 * @example const line = lineBatcher((chunk) => process.stdout.write(chunk)); line('{"msg":"a"}\n');
 */
export function lineBatcher(write: (chunk: string) => void): (line: string) => void {
  let buf = '';
  const flush = (): void => {
    pending.delete(flush);
    if (buf === '') return;
    const chunk = buf;
    buf = '';
    write(chunk);
  };
  if (!exitHooked) {
    exitHooked = true;
    process.once('exit', () => {
      for (const f of [...pending]) f();
    });
  }
  return (line) => {
    if (buf === '') {
      pending.add(flush);
      setImmediate(flush).unref();
    }
    buf += line;
  };
}
