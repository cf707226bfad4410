// Preloaded (`node --import`) into the process `berth test` runs: an error thrown while the handler file loads
// (a top-level `await loadModel()` that throws, a bad import) is printed as one line with the place in your code
// that threw, instead of Node's raw stack trace. Errors inside jobs are the worker runtime's and never get here.

/** The first stack frame in the user's code: not Node's internals, not a package. */
export function userFrame(stack: string | undefined): string | undefined {
  for (const line of (stack ?? '').split('\n')) {
    const m = /^\s+at (?:.* \()?(.+?:\d+:\d+)\)?$/.exec(line);
    if (m?.[1] && !m[1].startsWith('node:') && !m[1].includes('/node_modules/')) return m[1].replace(/^file:\/\//, '');
  }
  return undefined;
}

/** "berth test: the handler did not load: <message>\n  at <file:line:col>\n" */
export function loadErrorText(err: unknown): string {
  const e = err instanceof Error ? err : new Error(String(err));
  const frame = userFrame(e.stack);
  return `berth test: the handler did not load: ${e.message}\n${frame ? `  at ${frame}\n` : ''}`;
}

process.on('uncaughtException', (err) => {
  process.stderr.write(loadErrorText(err));
  process.exit(1);
});
