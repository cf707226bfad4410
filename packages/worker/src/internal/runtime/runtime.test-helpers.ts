import { prettyLine } from '@berth/protocol/internal';
import { createLogger, type LogRecord } from '../../logger.js';
import type { FakeControlPlane } from '../testing/fake-control-plane.test-helpers.js';
import { resolveStartOptions } from '../../options.js';
import { createWorkerRuntime } from './runtime.js';
import type { WorkerRuntime, WorkerRuntimeOptions } from './runtime-types.js';

export type TestWorker = WorkerRuntime & AsyncDisposable & { logs: LogRecord[]; printLogs(): string };

/**
 * Starts an in-process worker runtime against a fake control plane with short, test-friendly timings.
 * Dispose it with `await using`.
 */
export function startTestWorker(
  cp: FakeControlPlane,
  {
    abortGraceMs = 100,
    ...options
  }: Partial<WorkerRuntimeOptions> & Pick<WorkerRuntimeOptions, 'handler'> & { abortGraceMs?: number },
): TestWorker {
  const logs: LogRecord[] = [];
  const resolved = resolveStartOptions({ handler: options.handler }, {});
  const runtime = createWorkerRuntime({
    ...resolved,
    url: cp.url,
    endpointId: 'echo',
    token: cp.token,
    workerId: 'w-test',
    timings: { reconnect: { initialMs: 10, maxMs: 50 }, handshakeTimeoutMs: 2000, abortGraceMs },
    log: createLogger({ level: 'debug', sink: (r) => logs.push(r) }),
    ...options,
    stream: options.stream ?? (options.returnAggregateStream || resolved.stream),
  });
  return Object.assign(runtime, {
    logs,
    printLogs: () => logs.map((r) => prettyLine(r.level, r.time.getTime(), r.fields, r.msg, false)).join('\n'),
    [Symbol.asyncDispose]: async () => {
      await runtime.close();
    },
  });
}

/** A promise with its resolve function exposed. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves when `condition` holds, polling every few ms; rejects after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
