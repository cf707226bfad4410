import type { LogFormat, Logger } from '@berth/protocol/log';

/** One worker process to keep running. */
export interface WorkerSpec {
  endpointId: string;
  workerId: string;
  /** Absolute path of the handler file. */
  file: string;
  /**
   * Run this program and arguments instead of `node --import tsx <file>` (a RunPod-protocol worker, such as
   * runpod-python). It gets its own process group, and every signal goes to the whole group: runpod-python's
   * heartbeat child would otherwise outlive a killed worker and ping on.
   */
  command?: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface RestartPolicy {
  /** A worker that exits sooner than this after starting counts as an immediate crash. Default 5000. */
  minUptimeMs: number;
  /** Delay before the first restart; doubles with each immediate crash in a row. Default 500. */
  baseDelayMs: number;
  /** Upper bound of the restart delay. Default 8000. */
  maxDelayMs: number;
  /** Give up on a worker after this many immediate crashes in a row. Default 5. */
  maxImmediateCrashes: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  minUptimeMs: 5_000,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxImmediateCrashes: 5,
};

export interface SupervisorOptions {
  /** `file:` URL of the tsx loader, passed to `node --import`. */
  loaderUrl: string;
  /** Where the prefixed worker output goes. */
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  logger: Logger;
  color: boolean;
  /**
   * How worker log lines (JSON: workers get `BERTH_LOG_FORMAT=json`) are shown: `pretty` renders them after the
   * `[<endpoint>/<worker>]` prefix, info and debug on stdout, warn and error on stderr; `json` passes them through
   * unprefixed (they carry `workerId`). Default: `pretty`.
   */
  logFormat?: LogFormat;
  restart?: Partial<RestartPolicy>;
  /** Called when the supervisor stops restarting a worker. */
  onGiveUp?: (spec: WorkerSpec) => void;
  /**
   * Called instead of a restart when a worker exits before `markConnected` was called for it (its handler failed
   * to load, or the control plane refused it). The worker is dropped. Without this option such exits count as
   * crashes like any other.
   */
  onLoadFailure?: (spec: WorkerSpec, how: string) => void;
}
