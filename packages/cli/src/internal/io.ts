/** What a command reads and writes; `process` by default, replaceable in tests. */
export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export function processIo(): Io {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

/** Colors only on a terminal and never with `NO_COLOR` set (https://no-color.org). */
export function useColor(stream: Io['stdout'], env: NodeJS.ProcessEnv): boolean {
  if (env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '') return false;
  if (env['FORCE_COLOR'] !== undefined && env['FORCE_COLOR'] !== '0') return true;
  return stream.isTTY === true;
}

const CODES = {
  dim: [2, 22],
  bold: [1, 22],
  red: [31, 39],
  yellow: [33, 39],
  green: [32, 39],
  cyan: [36, 39],
  magenta: [35, 39],
  blue: [34, 39],
} as const;
export type Style = keyof typeof CODES;

/** `paint(true)('green', 'ok')` wraps the text in ANSI codes; `paint(false)` returns it unchanged. */
export function paint(enabled: boolean) {
  return (style: Style, text: string): string =>
    enabled ? `\x1b[${CODES[style][0]}m${text}\x1b[${CODES[style][1]}m` : text;
}
