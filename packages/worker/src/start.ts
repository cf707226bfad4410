import { startTracing, stopTracing } from '@berth/protocol/tracing';
import { createLogger, type Logger } from './logger.js';
import {
  ConfigError,
  resolveStartOptions,
  type ResolvedConnection,
  type ResolvedStartOptions,
  type BatchStartOptions,
  type JobStartOptions,
  type StartOptions,
} from './options.js';
import { findTestInput, runLocalTest, testInputDirs } from './internal/execute/local-test.js';
import { createWorkerRuntime } from './internal/runtime/runtime.js';
import type { WorkerRuntime } from './internal/runtime/runtime-types.js';
import { createPullRuntime } from './internal/runpod/pull-runtime.js';
import { runpodEnvOf, type RunpodEnv } from './internal/runpod/runpod-env.js';
import type { InputSchema } from './internal/execute/input-schema.js';
import { SDK_VERSION } from './internal/transport/version.js';

const NOTHING_TO_DO = `@berth/worker: nothing to do.
  To serve jobs from a control plane, set:
    BERTH_URL           the control plane, e.g. http://127.0.0.1:8080
    BERTH_ENDPOINT_ID   the endpoint this worker serves
    BERTH_WORKER_TOKEN  the worker token
  To run one job locally, pass --test-input '{"input": {...}}'
  or put a test_input.json next to your script or in the current directory.
`;

/**
 * Starts the worker; the process then belongs to it.
 *
 * - With `RUNPOD_WEBHOOK_GET_JOB` set (started by RunPod Serverless, or by `berth dev` for a `command` endpoint):
 *   takes jobs over RunPod's HTTP worker protocol instead (docs/worker-protocol.md, "Pull protocol").
 * - With `BERTH_URL` set: connects to the control plane and serves jobs until SIGTERM/SIGINT (graceful drain,
 *   exit 0) or a fatal error (bad token, protocol mismatch: exit 1).
 * - Otherwise, with `--test-input '<json>'` or a `test_input.json`: runs one job, prints
 *   `{"id":"local-test","status":"COMPLETED","output":...}` (or `FAILED` with `error`) and exits 0 (1 on failure).
 * - Otherwise: prints which environment variables to set and exits 1.
 *
 * Bad options or environment variables print a message naming them and exit 1.
 *
 * @example
 * import { start } from '@berth/worker';
 * start({ handler: async (job) => ({ greeting: `hello ${job.input.name}` }) });
 */
export function start<S extends InputSchema | undefined = undefined, O = unknown>(
  options: BatchStartOptions<S, O>,
): void;
export function start<S extends InputSchema | undefined = undefined, O = unknown>(options: JobStartOptions<S, O>): void;
export function start(options: StartOptions): void {
  let resolved: ResolvedStartOptions;
  let runpod: RunpodEnv | undefined;
  try {
    resolved = resolveStartOptions(options, process.env);
    runpod = runpodEnvOf(process.env, resolved.workerId);
  } catch (err) {
    exitWithConfigError(err);
  }
  if (runpod) return serveRunpod(resolved, runpod);
  const base = createLogger({ level: resolved.logLevel, format: resolved.logFormat });
  const log = base.child({ workerId: resolved.connection ? resolved.workerId : 'local' });
  if (resolved.connection) return serve(resolved, resolved.connection, base, log);
  let test: ReturnType<typeof findTestInput>;
  try {
    test = findTestInput(process.argv.slice(2), testInputDirs());
  } catch (err) {
    exitWithConfigError(err);
  }
  if (!test) {
    process.stderr.write(NOTHING_TO_DO);
    process.exit(1);
  }
  log.info('local mode: BERTH_URL is not set', { testInput: test.source });
  const controller = new AbortController();
  process.once('SIGINT', () => {
    controller.abort(new Error('interrupted'));
    process.once('SIGINT', () => process.exit(130));
  });
  runLocalTest(resolved, test.input, log, controller.signal).then(
    ({ body, code }) => process.stdout.write(`${JSON.stringify(body)}\n`, () => process.exit(code)),
    (err: unknown) => {
      log.error('local test crashed', { error: err });
      process.exit(1);
    },
  );
}

function serve(resolved: ResolvedStartOptions, connection: ResolvedConnection, base: Logger, log: Logger): void {
  // Tracing (OTEL_EXPORTER_OTLP_ENDPOINT): the SDK loads before the first job; without it, nothing is loaded.
  startTracing('berth-worker').then(
    (tracer) => runUntilSignal(createWorkerRuntime({ ...resolved, ...connection, log: base, tracer }), log),
    (err: unknown) => exitWithConfigError(new ConfigError(err instanceof Error ? err.message : String(err))),
  );
}

/** RunPod mode: the same handler over RunPod's pull protocol. */
function serveRunpod(resolved: ResolvedStartOptions, env: RunpodEnv): void {
  const log = createLogger({ level: resolved.logLevel, format: resolved.logFormat }).child({ workerId: env.workerId });
  const runtime = createPullRuntime({
    handler: resolved.handler,
    env,
    sdkVersion: `berth-${SDK_VERSION}`,
    concurrency: resolved.concurrency,
    concurrencyModifier: resolved.concurrencyModifier,
    returnAggregateStream: resolved.returnAggregateStream,
    stream: resolved.stream,
    drainTimeoutMs: resolved.drainTimeoutMs,
    inputSchema: resolved.inputSchema,
    retry: resolved.retry,
    abortGraceMs: resolved.timings.abortGraceMs,
    log,
  });
  runUntilSignal(runtime, log);
}

function runUntilSignal(runtime: WorkerRuntime, log: Logger): void {
  const onSignal = (signal: NodeJS.Signals): void => {
    log.info(`received ${signal}`, { active: runtime.activeJobs });
    void runtime.shutdown();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // Spans still buffered are exported before the process exits.
  void runtime.done.then(({ code }) => stopTracing().then(() => process.exit(code)));
}

function exitWithConfigError(err: unknown): never {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`@berth/worker: ${err.message}\n`);
  process.exit(1);
}
