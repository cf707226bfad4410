import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';

type Level = 'debug' | 'info' | 'warn' | 'error';
type Forward = (level: Level, message: string) => void;
interface Capture {
  forward: Forward;
  /** The console does not print: `forward` writes the line (as a JSON log line of the job). */
  replaces: boolean;
}

const current = new AsyncLocalStorage<Capture>();
let installed = false;
const METHODS: [keyof Console & ('log' | 'info' | 'warn' | 'error' | 'debug'), Level][] = [
  ['log', 'info'],
  ['info', 'info'],
  ['warn', 'warn'],
  ['error', 'error'],
  ['debug', 'debug'],
];

/**
 * Runs `fn` (a job's handler) so that `console.log/info/warn/error/debug` calls made inside it, including in its
 * awaited continuations and generator steps, are also handed to `forward` (tagged with that job). The console still
 * prints as usual, unless `replaces` (JSON logs: `forward` prints the line as a log line carrying the job's id).
 * Installed once per process, on first use.
 */
export function withConsoleForwarding<T>(forward: Forward, fn: () => T, replaces = false): T {
  install();
  return current.run({ forward, replaces }, fn);
}

function install(): void {
  if (installed) return;
  installed = true;
  for (const [method, level] of METHODS) {
    const original = console[method].bind(console) as (...args: unknown[]) => void;
    console[method] = (...args: unknown[]) => {
      const capture = current.getStore();
      if (!capture?.replaces) original(...args);
      if (capture) {
        try {
          capture.forward(level, format(...args));
        } catch {
          // logging must never break the handler
        }
      }
    };
  }
}
