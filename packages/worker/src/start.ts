import { createLogger, type Logger } from './logger.js';
import { ConfigError, resolveStartOptions, type ResolvedConnection, type ResolvedStartOptions, type StartOptions } from './options.js';
import { findTestInput, runLocalTest, testInputDirs } from './internal/local-test.js';
import { createWorkerRuntime } from './internal/runtime.js';

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
export function start(options: StartOptions): void {
  let resolved: ResolvedStartOptions;
  try {
    resolved = resolveStartOptions(options, process.env);
  } catch (err) {
    exitWithConfigError(err);
  }
  const log = createLogger({ level: resolved.logLevel, worker: resolved.connection ? resolved.workerId : 'local' });
  if (resolved.connection) return serve(resolved, resolved.connection, log);
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

function serve(resolved: ResolvedStartOptions, connection: ResolvedConnection, log: Logger): void {
  const runtime = createWorkerRuntime({
    handler: resolved.handler,
    url: connection.url,
    endpointId: connection.endpointId,
    token: connection.token,
    workerId: resolved.workerId,
    concurrency: resolved.concurrency,
    concurrencyModifier: resolved.concurrencyModifier,
    returnAggregateStream: resolved.returnAggregateStream,
    stream: resolved.stream,
    drainTimeoutMs: resolved.drainTimeoutMs,
    name: resolved.name,
    inputSchema: resolved.inputSchema,
    log: createLogger({ level: log.level }),
  });
  const onSignal = (signal: NodeJS.Signals): void => {
    log.info(`received ${signal}`, { active: runtime.activeJobs });
    void runtime.shutdown();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  void runtime.done.then(({ code }) => process.exit(code));
}

function exitWithConfigError(err: unknown): never {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`@berth/worker: ${err.message}\n`);
  process.exit(1);
}
