import { runpodWorkerEnv } from '@berth/protocol';
import {
  parseFlags,
  parseHost,
  parseLogFormat,
  parseLogLevel,
  parsePort,
  type LogFormat,
  type LogLevel,
} from '../args.js';
import {
  checkWorkerFiles,
  findConfigFile,
  gpuInventory,
  loadConfig,
  type ResolvedConfig,
  type ResolvedEndpoint,
} from '../config/index.js';
import { curlExamples, dialableUrl, readyLine } from '../internal/banner.js';
import { announcedSchema } from '../internal/announced-schema.js';
import { sampleRequest, schemaRequest, type SampleRequest } from '../internal/sample-input.js';
import { withoutWorkerEcho } from '../internal/worker-echo.js';
import { createTerminalLogger } from '../internal/terminal-logger.js';
import { paint, useColor, type Io } from '../internal/io.js';
import { keyFromEnv } from '../internal/keys.js';
import { startServer } from '../internal/listen.js';
import { shutdownSignal } from '../internal/signals.js';
import { WorkerSupervisor, type WorkerSpec } from '../internal/supervisor.js';
import { Fleet } from '../dev/fleet.js';
import { GpuAllocator } from '@berth/server/scaling';
import { EXIT, UsageError } from '../internal/usage-error.js';
import type { WatchMode } from '../dev/watcher.js';
import { startServerTracing } from '../internal/tracing.js';
import { stopTracing } from '@berth/protocol/tracing';
import {
  dataLine,
  openStoreOrExit,
  parseStoreArgs,
  STORE_ENV_HELP,
  STORE_FLAGS,
  STORE_HELP,
  storeServerOptions,
  type StoreArgs,
} from '../store-options.js';
import { EDGE_ENV_HELP, edgeServerOptions } from '../edge-options.js';
import { parseWebhookRetries, WEBHOOK_FLAGS, WEBHOOK_RETRIES_HELP, webhookOptions } from '../webhook-schedule.js';

export const DEV_HELP = `Usage: berth dev [--config <file>] [--port <n>] [--host <addr>] [--log-level <level>] [--log-format pretty|json] [--no-watch] [--watch-poll] [--webhook-retries <n>]

Runs the queue API on your machine and the workers of every endpoint in the config file, like production:
each endpoint scales between minWorkers and maxWorkers on queue depth (idleTimeoutMs back to minWorkers),
a changed handler file restarts that endpoint's workers (running jobs are requeued), and a crashed worker
is restarted. A handler that fails to load at startup stops berth dev with exit code 1. Stop it with Ctrl-C.

Options:
  -c, --config <file>     berth.config.json or berth.config.ts (default: the first of berth.config.ts,
                          .mts, .js, .mjs, .json in the current folder)
  -p, --port <n>          port to listen on (default 8080; 0 picks a free port)
      --host <addr>       address to listen on (default 127.0.0.1; 0.0.0.0 for all interfaces)
      --log-level <level> debug, info, warn or error (default info, or BERTH_LOG_LEVEL)
      --log-format <fmt>  pretty (default) or json (pino's JSON lines; worker lines passed through)
      --no-watch          do not restart workers when their handler files change
      --watch-poll        notice handler changes by comparing file stats every 0.5 s only, for mounts that
                          deliver no file events (default: file events, and a stat check every second)
${WEBHOOK_RETRIES_HELP}${STORE_HELP}  -h, --help              show this help

Environment:
  BERTH_API_KEY           the API key clients must send (default: a fresh key, printed at start)
  BERTH_WORKER_TOKEN      the token workers present (default: a fresh one, never printed)
  BERTH_LOG_LEVEL         default of --log-level
  BERTH_WATCH_POLL        1: as --watch-poll
  BERTH_LOG_FORMAT        default of --log-format
  OTEL_EXPORTER_OTLP_ENDPOINT
                          export traces over OTLP/HTTP (docs/observability.md)
${STORE_ENV_HELP}${EDGE_ENV_HELP}`;

export interface DevArgs {
  help: boolean;
  config: string | undefined;
  port: number;
  host: string;
  logLevel: LogLevel;
  /** `--log-format` (default `pretty`). */
  logFormat: LogFormat;
  /** Hot reload of handler files. */
  watch: boolean;
  /** How hot reload notices changes: `poll` with `--watch-poll` or `BERTH_WATCH_POLL=1`. */
  watchMode: WatchMode;
  /** `--webhook-retries`: retries of a failed webhook delivery; undefined: the config file's, else 2. */
  webhookRetries: number | undefined;
  store: StoreArgs;
}

export function parseDevArgs(argv: readonly string[], env: NodeJS.ProcessEnv, cwd = process.cwd()): DevArgs {
  const v = parseFlags('dev', argv, {
    config: { type: 'string', short: 'c' },
    port: { type: 'string', short: 'p' },
    host: { type: 'string' },
    'log-level': { type: 'string' },
    'log-format': { type: 'string' },
    'no-watch': { type: 'boolean' },
    'watch-poll': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
    ...WEBHOOK_FLAGS,
    ...STORE_FLAGS,
  });
  return {
    help: v.help === true,
    config: v.config as string | undefined,
    port: parsePort('dev', v.port as string | undefined, 8080),
    host: parseHost('dev', v.host as string | undefined, '127.0.0.1'),
    logLevel: parseLogLevel('dev', v['log-level'] as string | undefined, env),
    logFormat: parseLogFormat('dev', v['log-format'] as string | undefined, env, 'pretty'),
    webhookRetries: parseWebhookRetries('dev', v['webhook-retries'] as string | undefined),
    watch: v['no-watch'] !== true,
    watchMode: parseWatchMode(v['watch-poll'] === true, env),
    store: parseStoreArgs('dev', v, env, cwd),
  };
}

/** `--watch-poll`, else `BERTH_WATCH_POLL` (`1` or `0`). */
function parseWatchMode(flag: boolean, env: NodeJS.ProcessEnv): WatchMode {
  const raw = env['BERTH_WATCH_POLL'];
  if (flag || raw === '1') return 'poll';
  if (raw === undefined || raw === '' || raw === '0') return 'auto';
  throw new UsageError(`BERTH_WATCH_POLL must be 1 or 0 (got "${raw.slice(0, 40)}")`, 'dev');
}

/** `drainMs` of `server.close()`, then how long workers get after SIGTERM before SIGKILL. */
const DRAIN_MS = 5_000;
const WORKER_STOP_MS = 5_000;

/** `berth dev`: control plane plus supervised worker processes. Resolves with the exit code. */
export async function runDev(argv: readonly string[], io: Io): Promise<number> {
  const args = parseDevArgs(argv, io.env, io.cwd);
  if (args.help) {
    io.stdout.write(DEV_HELP);
    return EXIT.ok;
  }
  // 1. Config: any problem here is the user's to fix, so it throws ConfigError (exit 2) before anything starts.
  const config = await loadConfig(findConfigFile(args.config, io.cwd));
  checkWorkerFiles(config);
  // The GPUs endpoints with gpusPerWorker get (the config's list, else nvidia-smi -L); none needed: undefined.
  const gpuDevices = gpuInventory(
    config,
    config.endpoints.map((e) => e.id),
  );

  // 2. Secrets.
  const color = useColor(io.stdout, io.env);
  const c = paint(color);
  const logger = createTerminalLogger(args.logLevel, args.logFormat, io, color);
  const apiKey = keyFromEnv(io.env, 'BERTH_API_KEY', 'berth_');
  const workerToken = keyFromEnv(io.env, 'BERTH_WORKER_TOKEN', 'berthw_');

  // 3. Control plane.
  const ids = config.endpoints.map((e) => e.id);
  // The first endpoint's first hello: the input schema it announces shapes the banner's sample curl.
  let firstHello!: () => void;
  const firstHelloSeen = new Promise<void>((r) => (firstHello = r));
  const tracingFailed = await startServerTracing(io);
  if (tracingFailed !== undefined) return tracingFailed;
  const edge = edgeServerOptions(io.env, 'dev', config.rateLimits);
  const opened = await openStoreOrExit(args.store, io.stderr);
  if (typeof opened === 'number') return opened;
  const started = await startServer(
    {
      apiKeys: [apiKey.key],
      workerTokens: [workerToken.key],
      endpoints: ids,
      lb: Object.fromEntries(config.endpoints.flatMap((e) => (e.http ? [[e.id, e.http]] : []))),
      ...(io.env['BERTH_LB_DOMAIN'] ? { lbDomain: io.env['BERTH_LB_DOMAIN'] } : {}),
      store: opened.store,
      models: config.models,
      ...(config.batches ? { batches: config.batches } : {}),
      // Job events once: the workers berth dev runs print their own "job completed" lines.
      logger: withoutWorkerEcho(logger, (workerId) => supervisor.pids().has(workerId)),
      ...storeServerOptions(args.store),
      ...edge,
      webhooks: webhookOptions(edge.webhooks, config.webhooks, args.webhookRetries),
      ...(opened.keyStore ? { keyStore: opened.keyStore } : {}),
    },
    args.port,
    args.host,
    io,
  );
  if (typeof started === 'number') return started;
  const { server, url, recovered } = started;
  server.workers.on('connected', (_workerId, endpointId) => {
    if (endpointId === ids[0]) firstHello();
  });

  // 4. Workers: the fleet checks each handler compiles, then starts minWorkers and scales.
  const workerEnv = { ...io.env, BERTH_LOG_LEVEL: args.logLevel, BERTH_LOG_FORMAT: 'json' };
  let fatal!: (message: string) => void;
  const failed = new Promise<{ fatal: string }>((r) => (fatal = (message) => r({ fatal: message })));
  const supervisor = new WorkerSupervisor([], {
    loaderUrl: import.meta.resolve('tsx'),
    stdout: io.stdout,
    stderr: io.stderr,
    logger,
    color,
    logFormat: args.logFormat,
    onGiveUp: (spec) => {
      fleet.onGiveUp(spec);
      const alive = config.endpoints.some((e) => supervisor.workerIds(e.id).length > 0 || e.minWorkers < e.maxWorkers);
      if (!alive) fatal('every worker failed to start');
    },
    onLoadFailure: (spec, how) => fleet.onLoadFailure(spec, how),
  });
  const gpus = gpuDevices && new GpuAllocator(gpuDevices, (ep) => server.workers.setGpus(ep, gpus!.holdings(ep)));
  if (gpus) logger.info(`GPUs placed per worker: ${gpuDevices!.join(', ')}`);
  const fleet = new Fleet({
    server,
    supervisor,
    ...(gpus ? { gpus } : {}),
    endpoints: config.endpoints,
    dir: config.dir,
    configFile: config.file,
    specFor: (ep, workerId) => workerSpec(config, ep, workerId, dialableUrl(url), workerToken.key, workerEnv),
    logger,
    watch: args.watch,
    watchMode: args.watchMode,
    onFatal: fatal,
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
  const notCompiling = await fleet.start();
  if (notCompiling !== undefined) fatal(notCompiling);

  // 5. Tell the user (unless a handler already failed).
  if (notCompiling === undefined) {
    // One write, so a reader that sees the ready line also sees where the data lives.
    io.stdout.write(`${readyLine(url, ids, color)}\n${dataLine(opened.where, recovered)}\n`);
    io.stdout.write(
      `API key: ${apiKey.key}${apiKey.generated ? c('dim', '  (generated for this run; set BERTH_API_KEY to choose one)') : ''}\n`,
    );
    io.stdout.write(`Playground: ${dialableUrl(url)}/#key=${apiKey.key}\n`);
    io.stdout.write(`Workers: ${config.endpoints.map(describeEndpoint).join(', ')}\n`);
    for (const ep of config.endpoints.filter((e) => e.maxWorkers === 0 && !e.command)) {
      io.stdout.write(
        `Endpoint ${ep.id} has "workers": 0; start its workers yourself:\n` +
          `  BERTH_URL=${dialableUrl(url)} BERTH_ENDPOINT_ID=${ep.id} BERTH_WORKER_TOKEN=${workerToken.key} node --import tsx ${ep.worker}\n`,
      );
    }
    for (const ep of config.endpoints.filter((e) => e.http))
      io.stdout.write(
        `Endpoint ${ep.id} is load-balancing: its workers' routes are at ${dialableUrl(url)}/v2/${ep.id}/lb/<path>\n` +
          `  curl -H "Authorization: Bearer ${apiKey.key}" ${dialableUrl(url)}/v2/${ep.id}/lb/ping\n`,
      );
    const first = config.endpoints.find((e) => !e.http);
    const tryIt = (sample: SampleRequest) =>
      io.stdout.write(
        `\nTry the ${first!.id} endpoint:\n${curlExamples(url, apiKey.key, first!.id, sample)
          .map((l) => `  ${l.startsWith('#') ? c('dim', l) : l}`)
          .join('\n')}\n\n`,
      );
    const fromFile = first && sampleRequest(first.worker, config.dir);
    if (fromFile?.file) tryIt(fromFile);
    io.stdout.write(c('dim', 'Press Ctrl-C to stop.\n'));
    // Without a test_input.json, the sample waits for the worker's hello: its input schema, if it announces one.
    if (first && fromFile && !fromFile.file)
      void announcedSchema(server, apiKey.key, first.id, firstHelloSeen).then((schema) =>
        tryIt(schemaRequest(first.id, schema) ?? fromFile),
      );
  }

  // 6. Run until a signal (or until every worker has been given up on).
  const why = await Promise.race([signals.signal, failed]);
  fleet.stop();
  // The message may end with a line of code (a compile error): "stopping" goes on a line of its own.
  if (typeof why !== 'string') logger.error(`${why.fatal}\nstopping`);
  else
    logger.info(
      `${why}: shutting down: closing the control plane, then stopping the workers (press Ctrl-C again to force)`,
    );
  supervisor.beginShutdown();
  try {
    await server.close({ drainMs: DRAIN_MS });
  } catch (err) {
    logger.error('error while closing the control plane', { error: err instanceof Error ? err.message : String(err) });
  }
  await supervisor.stop(WORKER_STOP_MS);
  await stopTracing(); // the spans still buffered are exported
  signals.dispose();
  logger.info('stopped');
  return typeof why !== 'string' ? EXIT.failure : EXIT.ok;
}

function describeEndpoint(ep: ResolvedEndpoint): string {
  const conc = ep.concurrency !== undefined ? `, concurrency ${ep.concurrency}` : '';
  const n =
    ep.minWorkers === ep.maxWorkers
      ? `${ep.workers} worker${ep.workers === 1 ? '' : 's'}`
      : `${ep.minWorkers}-${ep.maxWorkers} workers, idle ${ep.idleTimeoutMs} ms`;
  const gpus = ep.gpusPerWorker ? `, ${ep.gpusPerWorker} GPU${ep.gpusPerWorker === 1 ? '' : 's'} each` : '';
  return `${ep.id} (${n}${conc}${gpus})`;
}

/** One spec per worker started at once (`minWorkers` of each endpoint): ids `<endpoint>-<n>`. */
export function workerSpecs(
  config: ResolvedConfig,
  url: string,
  workerToken: string,
  env: NodeJS.ProcessEnv,
): WorkerSpec[] {
  return config.endpoints.flatMap((ep) =>
    Array.from({ length: ep.workers }, (_, i) => workerSpec(config, ep, `${ep.id}-${i + 1}`, url, workerToken, env)),
  );
}

/** The process of one worker: cwd the config folder, the worker env vars set. */
export function workerSpec(
  config: ResolvedConfig,
  ep: ResolvedEndpoint,
  workerId: string,
  url: string,
  workerToken: string,
  env: NodeJS.ProcessEnv,
): WorkerSpec {
  const base: NodeJS.ProcessEnv = { ...env };
  // Workers do not need the client API key; inherited BERTH_* settings would be ambiguous.
  for (const k of ['BERTH_API_KEY', 'BERTH_CONCURRENCY', 'BERTH_WORKER_ID', 'BERTH_ENDPOINT_ID']) delete base[k];
  const out: NodeJS.ProcessEnv = {
    ...base,
    BERTH_URL: url,
    BERTH_ENDPOINT_ID: ep.id,
    BERTH_WORKER_TOKEN: workerToken,
    BERTH_WORKER_ID: workerId,
  };
  if (ep.concurrency !== undefined) out['BERTH_CONCURRENCY'] = String(ep.concurrency);
  // Running jobs get aborted (cleanly) before the supervisor's SIGKILL deadline.
  if (ep.drainTimeoutMs !== undefined)
    out['BERTH_DRAIN_TIMEOUT_MS'] = String(Math.min(ep.drainTimeoutMs, WORKER_STOP_MS - 1_000));
  out['BERTH_DRAIN_TIMEOUT_MS'] ??= String(WORKER_STOP_MS - 1_000);
  // A load-balancing worker is an HTTP server of its own: no control-plane credentials (PORT comes from the fleet).
  if (ep.http && ep.command)
    return {
      endpointId: ep.id,
      workerId,
      file: ep.worker,
      cwd: config.dir,
      env: {
        ...base,
        BERTH_ENDPOINT_ID: ep.id,
        BERTH_WORKER_ID: workerId,
        RUNPOD_ENDPOINT_ID: ep.id,
        RUNPOD_POD_ID: workerId,
      },
      command: ep.command,
    };
  if (ep.command)
    return {
      endpointId: ep.id,
      workerId,
      file: ep.worker,
      cwd: config.dir,
      env: { ...out, ...runpodWorkerEnv(url, ep.id, workerId, workerToken) },
      command: ep.command,
    };
  return { endpointId: ep.id, workerId, file: ep.worker, cwd: config.dir, env: out };
}
