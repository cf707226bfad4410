import type { Tracer } from '@opentelemetry/api';
import type { Logger } from '../../logger.js';
import type { ResolvedConnection, ResolvedStartOptions } from '../../options.js';

/**
 * Options of `createWorkerRuntime`: `resolveStartOptions()`'s result (every default applied there, once) with the
 * connection it found, and the base logger (the runtime tags it with the worker id).
 */
export type WorkerRuntimeOptions = Omit<ResolvedStartOptions, 'connection' | 'logLevel'> &
  ResolvedConnection & {
    log: Logger;
    /** OpenTelemetry tracer of the `berth.handler` spans; undefined: tracing off. */
    tracer?: Tracer | undefined;
  };

/** Why a runtime stopped; `code` is the process exit code `start()` uses. */
export interface RuntimeExit {
  code: 0 | 1;
  reason: string;
}

/** A running worker connected (or connecting) to a control plane. */
export interface WorkerRuntime {
  readonly workerId: string;
  /** Resolves once the runtime has stopped (drained, closed, or a fatal error). */
  readonly done: Promise<RuntimeExit>;
  /** Jobs received and not yet finished. */
  readonly activeJobs: number;
  readonly concurrency: number;
  /** True while connected and welcomed. */
  readonly connected: boolean;
  /**
   * Graceful stop: sends `draining`, lets running jobs finish until the timeout, aborts the rest (`job.fail`
   * with `aborted`), closes the socket. Calling it again skips straight to aborting.
   */
  shutdown(options?: { timeoutMs?: number }): Promise<RuntimeExit>;
  /** Immediate stop: aborts jobs without reporting them and drops the socket. */
  close(): Promise<RuntimeExit>;
}
