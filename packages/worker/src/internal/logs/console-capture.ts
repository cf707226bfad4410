import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';

type Level = 'debug' | 'info' | 'warn' | 'error';
type Forward = (level: Level, message: string) => void;

const current = new AsyncLocalStorage<Forward>();
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
 * prints as usual. Installed once per process, on first use.
 */
export function withConsoleForwarding<T>(forward: Forward, fn: () => T): T {
  install();
  return current.run(forward, fn);
}

function install(): void {
  if (installed) return;
  installed = true;
  for (const [method, level] of METHODS) {
    const original = console[method].bind(console) as (...args: unknown[]) => void;
    console[method] = (...args: unknown[]) => {
      original(...args);
      const forward = current.getStore();
      if (forward) {
        try {
          forward(level, format(...args));
        } catch {
          // logging must never break the handler
        }
      }
    };
  }
}
