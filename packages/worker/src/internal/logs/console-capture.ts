import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';

type Level = 'debug' | 'info' | 'warn' | 'error';
type Forward = (level: Level, message: string) => void;

const current = new AsyncLocalStorage<Forward>();
/** The store of a context known not to be a job's (a caller's, given back after a job entered its own). */
const NO_JOB: Forward = () => {};
let installed = false;
/**
 * Jobs run inside `current` (context tracking on). Off until a handler first writes to the console: on Node 20 an
 * enabled AsyncLocalStorage adds a hook call to every promise of the process, a cost a handler that never logs
 * should not pay.
 */
let tracking = false;
/** The job whose synchronous part runs now (before tracking). */
let syncForward: Forward | undefined;
/** Jobs started before tracking and not yet settled. */
const untracked = new Set<{ forward: Forward }>();
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
 *
 * Context tracking starts with the first console call made while a job runs. A call in a job's synchronous part
 * enters that job's context there, so its later continuations are attributed too. Before that, one made after an
 * await is attributed only when a single job is in flight (which job it came from is otherwise unknown: not shipped).
 */
export function withConsoleForwarding<T>(forward: Forward, fn: () => T): T {
  install();
  if (consoleTrackingStarted()) return current.run(forward, fn);
  const outer = syncForward;
  syncForward = forward;
  const token = { forward };
  untracked.add(token);
  let result: T;
  try {
    result = fn();
  } catch (err) {
    untracked.delete(token);
    throw err;
  } finally {
    syncForward = outer;
    // fn logged synchronously and entered its context: give the caller its own back for the rest of this tick.
    if (tracking) current.enterWith(outer ?? NO_JOB);
  }
  if (isPromiseLike(result)) {
    const settled = (): void => void untracked.delete(token);
    result.then(settled, settled);
  } else untracked.delete(token);
  return result;
}

function install(): void {
  if (installed) return;
  installed = true;
  for (const [method, level] of METHODS) {
    const original = console[method].bind(console) as (...args: unknown[]) => void;
    console[method] = (...args: unknown[]) => {
      original(...args);
      const forward = forwardOfCaller();
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

/** The job a console call belongs to, if known; starts context tracking on the first call from a job. */
function forwardOfCaller(): Forward | undefined {
  if (tracking) {
    const forward = current.getStore();
    if (forward === NO_JOB) return undefined;
    if (forward) return forward;
  }
  if (syncForward) {
    if (!tracking) {
      tracking = true;
      current.enterWith(syncForward); // this job's continuations from here on carry it
    }
    return syncForward;
  }
  if (untracked.size === 0) return undefined;
  tracking = true;
  if (untracked.size !== 1) return undefined;
  for (const token of untracked) return token.forward;
  return undefined;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** Whether context tracking has started in this process (for tests). */
export function consoleTrackingStarted(): boolean {
  return tracking;
}
