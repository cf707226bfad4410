import type { Handler } from '../handler.js';
import type { Logger } from '../logger.js';
import type { BackoffOptions } from './backoff.js';
import type { InputSchema } from './input-schema.js';

/** Options of `createWorkerRuntime`: explicit values instead of the environment (used by `start()` and tests). */
export interface WorkerRuntimeOptions {
  handler: Handler;
  /** Full worker WebSocket URL, `ws(s)://host:port/v2/_worker/ws`. */
  url: string;
  endpointId: string;
  token: string;
  /** Default `<hostname>-<pid>-<random4>`. */
  workerId?: string;
  /** Default 1. */
  concurrency?: number;
  concurrencyModifier?: ((current: number) => number) | undefined;
  /** Default false. */
  returnAggregateStream?: boolean;
  /** `hello.stream`. Default: generator handler or `returnAggregateStream`. */
  stream?: boolean;
  /** Local drain (shutdown) timeout in ms. Default 30000. */
  drainTimeoutMs?: number;
  /** After the drain deadline hands running jobs back, how long to wait for the control plane to acknowledge them. Default 2000. */
  abortGraceMs?: number;
  /** Reconnect backoff. Default 250 ms doubling to 5 s (runtime.ts). */
  reconnect?: BackoffOptions;
  /** Time from dialing to `welcome`. Default 10000. */
  handshakeTimeoutMs?: number;
  /** A label printed in the startup log line. */
  name?: string | undefined;
  /** Base logger (the runtime tags it with the worker id). Default: stderr at info. */
  log?: Logger;
  /** See `StartOptions.inputSchema`. */
  inputSchema?: InputSchema | undefined;
  /**
   * Forward what handlers log (`job.log.*`, and `console.*` inside a handler) to the control plane, where
   * `GET /v2/<ep>/logs/<job_id>` shows it. Default true.
   */
  forwardLogs?: boolean;
}

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
