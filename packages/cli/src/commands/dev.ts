import { parseFlags, parseHost, parseLogLevel, parsePort, type LogLevel } from '../args.js';
import { checkWorkerFiles, findConfigFile, loadConfig, type ResolvedConfig } from '../config.js';
import { curlExamples, dialableUrl, readyLine } from '../internal/banner.js';
import { createConsoleLogger } from '../internal/console-logger.js';
import { paint, useColor, type Io } from '../internal/io.js';
import { keyFromEnv } from '../internal/keys.js';
import { startServer } from '../internal/listen.js';
import { shutdownSignal } from '../internal/signals.js';
import { WorkerSupervisor, type WorkerSpec } from '../internal/supervisor.js';
import { EXIT } from '../internal/usage-error.js';

export const DEV_HELP = `Usage: berth dev [--config <file>] [--port <n>] [--host <addr>] [--log-level <level>]

Runs the queue API on your machine and the workers of every endpoint in the config file, restarting a
worker that crashes. Stop it with Ctrl-C.

Options:
  -c, --config <file>     berth.config.json or berth.config.ts (default: the first of berth.config.ts,
                          .mts, .js, .mjs, .json in the current folder)
  -p, --port <n>          port to listen on (default 8080; 0 picks a free port)
      --host <addr>       address to listen on (default 127.0.0.1; 0.0.0.0 for all interfaces)
      --log-level <level> debug, info, warn or error (default info, or BERTH_LOG_LEVEL)
  -h, --help              show this help

Environment:
  BERTH_API_KEY           the API key clients must send (default: a fresh key, printed at start)
  BERTH_WORKER_TOKEN      the token workers present (default: a fresh one, never printed)
  BERTH_LOG_LEVEL         default of --log-level
`;

export interface DevArgs {
  help: boolean;
  config: string | undefined;
  port: number;
  host: string;
  logLevel: LogLevel;
}

export function parseDevArgs(argv: readonly string[], env: NodeJS.ProcessEnv): DevArgs {
  const v = parseFlags('dev', argv, {
    config: { type: 'string', short: 'c' },
    port: { type: 'string', short: 'p' },
    host: { type: 'string' },
    'log-level': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  return {
    help: v.help === true,
    config: v.config as string | undefined,
    port: parsePort('dev', v.port as string | undefined, 8080),
    host: parseHost('dev', v.host as string | undefined, '127.0.0.1'),
    logLevel: parseLogLevel('dev', v['log-level'] as string | undefined, env),
  };
}

/** `drainMs` of `server.close()`, then how long workers get after SIGTERM before SIGKILL. */
const DRAIN_MS = 5_000;
const WORKER_STOP_MS = 5_000;

/** `berth dev`: control plane plus supervised worker processes. Resolves with the exit code. */
export async function runDev(argv: readonly string[], io: Io): Promise<number> {
  const args = parseDevArgs(argv, io.env);
  if (args.help) {
    io.stdout.write(DEV_HELP);
    return EXIT.ok;
  }
  // 1. Config: any problem here is the user's to fix, so it throws ConfigError (exit 2) before anything starts.
  const config = await loadConfig(findConfigFile(args.config, io.cwd));
  checkWorkerFiles(config);

  // 2. Secrets.
  const color = useColor(io.stdout, io.env);
  const c = paint(color);
  const logger = createConsoleLogger({ level: args.logLevel, io, color });
  const apiKey = keyFromEnv(io.env, 'BERTH_API_KEY', 'berth_');
  const workerToken = keyFromEnv(io.env, 'BERTH_WORKER_TOKEN', 'berthw_');

  // 3. Control plane.
  const ids = config.endpoints.map((e) => e.id);
  const started = await startServer(
    { apiKeys: [apiKey.key], workerTokens: [workerToken.key], endpoints: ids, logger },
    args.port,
    args.host,
    io,
  );
  if (typeof started === 'number') return started;
  const { server, url } = started;
  for (const ep of config.endpoints) server.setExpectedWorkers(ep.id, ep.workers);

  // 4. Workers.
  const specs = workerSpecs(config, dialableUrl(url), workerToken.key, { ...io.env, BERTH_LOG_LEVEL: args.logLevel });
  const remaining = new Map(config.endpoints.map((e) => [e.id, e.workers]));
  let allGaveUp!: () => void;
  const everyWorkerGaveUp = new Promise<'gave-up'>((r) => (allGaveUp = () => r('gave-up')));
  const supervisor = new WorkerSupervisor(specs, {
    loaderUrl: import.meta.resolve('tsx'),
    stdout: io.stdout,
    stderr: io.stderr,
    logger,
    color,
    onGiveUp: (spec) => {
      const left = (remaining.get(spec.endpointId) ?? 1) - 1;
      remaining.set(spec.endpointId, left);
      server.setExpectedWorkers(spec.endpointId, left);
      if ([...remaining.values()].every((n) => n === 0) && specs.length > 0) allGaveUp();
    },
  });
  const signals = shutdownSignal({
    // Workers in the same terminal get the Ctrl-C too and exit on their own: they must not be restarted.
    first: () => supervisor.beginShutdown(),
    force: (s) => {
      io.stderr.write(`berth: ${s} again; killing workers and exiting now\n`);
      supervisor.killAll();
      process.exit(130);
    },
  });
  supervisor.start();

  // 5. Tell the user.
  io.stdout.write(`${readyLine(url, ids, color)}\n`);
  io.stdout.write(
    `API key: ${apiKey.key}${apiKey.generated ? c('dim', '  (generated for this run; set BERTH_API_KEY to choose one)') : ''}\n`,
  );
  io.stdout.write(`Workers: ${config.endpoints.map(describeEndpoint).join(', ')}\n`);
  for (const ep of config.endpoints.filter((e) => e.workers === 0)) {
    io.stdout.write(
      `Endpoint ${ep.id} has "workers": 0; start its workers yourself:\n` +
        `  BERTH_URL=${dialableUrl(url)} BERTH_ENDPOINT_ID=${ep.id} BERTH_WORKER_TOKEN=${workerToken.key} node --import tsx ${ep.worker}\n`,
    );
  }
  const first = ids[0];
  if (first !== undefined) {
    io.stdout.write(`\nTry the ${first} endpoint:\n${curlExamples(url, apiKey.key, first).map((l) => `  ${l.startsWith('#') ? c('dim', l) : l}`).join('\n')}\n\n`);
  }
  io.stdout.write(c('dim', 'Press Ctrl-C to stop.\n'));

  // 6. Run until a signal (or until every worker has been given up on).
  const why = await Promise.race([signals.signal, everyWorkerGaveUp]);
  if (why === 'gave-up') logger.error('every worker failed to start; stopping');
  else logger.info(`${why}: shutting down: closing the control plane, then stopping the workers (press Ctrl-C again to force)`);
  supervisor.beginShutdown();
  try {
    await server.close({ drainMs: DRAIN_MS });
  } catch (err) {
    logger.error('error while closing the control plane', { error: err instanceof Error ? err.message : String(err) });
  }
  await supervisor.stop(WORKER_STOP_MS);
  signals.dispose();
  logger.info('stopped');
  return why === 'gave-up' ? EXIT.failure : EXIT.ok;
}

function describeEndpoint(ep: ResolvedConfig['endpoints'][number]): string {
  const conc = ep.concurrency !== undefined ? `, concurrency ${ep.concurrency}` : '';
  return `${ep.id} (${ep.workers} worker${ep.workers === 1 ? '' : 's'}${conc})`;
}

/** One spec per worker process: ids `<endpoint>-<n>`, cwd the config folder, the worker env vars set. */
export function workerSpecs(config: ResolvedConfig, url: string, workerToken: string, env: NodeJS.ProcessEnv): WorkerSpec[] {
  const base: NodeJS.ProcessEnv = { ...env };
  // Workers do not need the client API key; inherited BERTH_* settings would be ambiguous.
  for (const k of ['BERTH_API_KEY', 'BERTH_CONCURRENCY', 'BERTH_WORKER_ID', 'BERTH_ENDPOINT_ID']) delete base[k];
  return config.endpoints.flatMap((ep) =>
    Array.from({ length: ep.workers }, (_, i) => {
      const workerId = `${ep.id}-${i + 1}`;
      const env: NodeJS.ProcessEnv = {
        ...base,
        BERTH_URL: url,
        BERTH_ENDPOINT_ID: ep.id,
        BERTH_WORKER_TOKEN: workerToken,
        BERTH_WORKER_ID: workerId,
      };
      if (ep.concurrency !== undefined) env['BERTH_CONCURRENCY'] = String(ep.concurrency);
      // Running jobs get aborted (cleanly) before the supervisor's SIGKILL deadline.
      env['BERTH_DRAIN_TIMEOUT_MS'] ??= String(WORKER_STOP_MS - 1_000);
      return { endpointId: ep.id, workerId, file: ep.worker, cwd: config.dir, env };
    }),
  );
}
