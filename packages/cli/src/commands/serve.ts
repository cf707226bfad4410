import {
  parseEndpointList,
  parseFlags,
  parseHost,
  parseLogFormat,
  parseLogLevel,
  parsePort,
  type LogFormat,
  type LogLevel,
} from '../args.js';
import { curlExamples, dialableUrl, readyLine } from '../internal/banner.js';
import { createTerminalLogger } from '../internal/terminal-logger.js';
import { paint, useColor, type Io } from '../internal/io.js';
import { keyFromEnv } from '../internal/keys.js';
import { startServer } from '../internal/listen.js';
import { shutdownSignal } from '../internal/signals.js';
import { EXIT } from '../internal/usage-error.js';
import { startServerTracing } from '../internal/tracing.js';
import { stopTracing } from '@berth/protocol/tracing';
import { ConfigError, findConfigFile, gpuInventory, loadConfig, type ResolvedConfig } from '../config/index.js';
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

import {
  parseScaleArgs,
  SCALE_FLAGS,
  SCALE_HELP,
  scaledImages,
  startScaling,
  type ScaleArgs,
  type Scaling,
} from '../scale/scale-options.js';

export const SERVE_HELP = `Usage: berth serve [--port <n>] [--host <addr>] [--endpoint <id,...>] [--accept-worker-endpoints] [--config <file>] [--store sqlite|memory] [--data-dir <dir>] [--scale docker [--image <ep>=<image>]] [--log-level <level>] [--log-format json|pretty] [--webhook-retries <n>]

Runs the control plane (the queue API and the worker WebSocket). Start workers yourself, anywhere, with
the environment variables it prints; or, with --scale docker, it starts and stops worker containers
with each endpoint's queue (docs/deployment.md, "Scaling in production"). Stop it with Ctrl-C.

Options:
  -p, --port <n>          port to listen on (default 8080; 0 picks a free port)
      --host <addr>       address to listen on (default 127.0.0.1; 0.0.0.0 for all interfaces)
  -e, --endpoint <ids>    endpoint ids served, comma-separated or repeated (also: the endpoints of
                          stored worker tokens, berth keys create --worker --endpoints <id>)
      --accept-worker-endpoints
                          a worker announcing an unknown endpoint registers it (off by default: with
                          it, anyone holding BERTH_WORKER_TOKEN can create endpoints)
  -c, --config <file>     a berth.config file: its endpoints are known from the start, its public
                          models are served and its scaling settings answer GET /v2/<endpoint>/scaling
                          (KEDA); its workers are not started (run them anywhere, or --scale docker)
${WEBHOOK_RETRIES_HELP}${STORE_HELP}${SCALE_HELP}      --log-level <level> debug, info, warn or error (default info, or BERTH_LOG_LEVEL)
      --log-format <fmt>  json (pino's JSON lines, on stdout) or pretty (default: json unless stdout
                          is a terminal, or BERTH_LOG_FORMAT)
  -h, --help              show this help

Environment:
  BERTH_API_KEY           the API key clients must send (default: a fresh key, printed at start)
  BERTH_WORKER_TOKEN      the token workers must present (default: a fresh token, printed at start)
  BERTH_LOG_LEVEL         default of --log-level
  BERTH_LOG_FORMAT        default of --log-format
  OTEL_EXPORTER_OTLP_ENDPOINT
                          export traces over OTLP/HTTP (also OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and the
                          other OTEL_* variables; docs/observability.md)
${STORE_ENV_HELP}${EDGE_ENV_HELP}`;

export interface ServeArgs {
  help: boolean;
  port: number;
  host: string;
  endpoints: string[];
  /** Workers may register endpoints that are not configured. */
  acceptWorkerEndpoints: boolean;
  /** Config file whose endpoints and public models are served (workers are not started). */
  config: string | undefined;
  logLevel: LogLevel;
  /** `--log-format`; undefined: json unless stdout is a terminal. */
  logFormat: LogFormat | undefined;
  /** `--webhook-retries`: retries of a failed webhook delivery; undefined: the config file's, else 2. */
  webhookRetries: number | undefined;
  store: StoreArgs;
  /** `--scale docker` and its settings. */
  scale: ScaleArgs;
}

export function parseServeArgs(argv: readonly string[], env: NodeJS.ProcessEnv, cwd = process.cwd()): ServeArgs {
  const v = parseFlags('serve', argv, {
    port: { type: 'string', short: 'p' },
    host: { type: 'string' },
    endpoint: { type: 'string', short: 'e', multiple: true },
    'accept-worker-endpoints': { type: 'boolean' },
    config: { type: 'string', short: 'c' },
    'log-level': { type: 'string' },
    'log-format': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
    ...WEBHOOK_FLAGS,
    ...STORE_FLAGS,
    ...SCALE_FLAGS,
  });
  return {
    help: v.help === true,
    port: parsePort('serve', v.port as string | undefined, 8080),
    host: parseHost('serve', v.host as string | undefined, '127.0.0.1'),
    endpoints: parseEndpointList('serve', v.endpoint as string[] | undefined),
    acceptWorkerEndpoints: v['accept-worker-endpoints'] === true,
    config: v.config as string | undefined,
    logLevel: parseLogLevel('serve', v['log-level'] as string | undefined, env),
    logFormat:
      v['log-format'] !== undefined || env['BERTH_LOG_FORMAT'] !== undefined
        ? parseLogFormat('serve', v['log-format'] as string | undefined, env, 'json')
        : undefined,
    webhookRetries: parseWebhookRetries('serve', v['webhook-retries'] as string | undefined),
    store: parseStoreArgs('serve', v, env, cwd),
    scale: parseScaleArgs(v, env),
  };
}

const DRAIN_MS = 10_000;

/** `berth serve`: the control plane alone. Resolves with the exit code. */
export async function runServe(argv: readonly string[], io: Io): Promise<number> {
  const args = parseServeArgs(argv, io.env, io.cwd);
  if (args.help) {
    io.stdout.write(SERVE_HELP);
    return EXIT.ok;
  }
  // A config file (optional): its endpoints and public models; a bad one is the user's to fix (ConfigError, exit 2).
  const config = args.config !== undefined ? await loadConfig(findConfigFile(args.config, io.cwd)) : undefined;
  const endpoints = [...new Set([...args.endpoints, ...(config?.endpoints.map((e) => e.id) ?? [])])];
  const images = scaledImages(args.scale, config);
  if (config) checkHttpEndpoints(config, images);
  // The GPUs scaled endpoints with gpusPerWorker get (the config's list, else nvidia-smi -L).
  const gpuDevices = config && gpuInventory(config, [...images.keys()]);
  const color = useColor(io.stdout, io.env);
  const c = paint(color);
  const logger = createTerminalLogger(
    args.logLevel,
    args.logFormat ?? (io.stdout.isTTY ? 'pretty' : 'json'),
    io,
    color,
  );
  const apiKey = keyFromEnv(io.env, 'BERTH_API_KEY', 'berth_');
  const workerToken = keyFromEnv(io.env, 'BERTH_WORKER_TOKEN', 'berthw_');

  const tracingFailed = await startServerTracing(io);
  if (tracingFailed !== undefined) return tracingFailed;
  const edge = edgeServerOptions(io.env, 'serve', config?.rateLimits);
  if (!edge.webhooks?.secret)
    logger.warn(
      'webhooks are unsigned: receivers cannot tell them from forged ones; set BERTH_WEBHOOK_SECRET=whsec_<base64> (docs/webhooks.md)',
    );
  const opened = await openStoreOrExit(args.store, io.stderr);
  if (typeof opened === 'number') return opened;
  // Scaled endpoints get stored worker tokens; the memory store has no key store of its own.
  const keyStore =
    opened.keyStore ?? (images.size > 0 ? new (await import('@berth/server/memory')).MemoryKeyStore() : undefined);
  let scaler: Scaling | undefined;
  const started = await startServer(
    {
      apiKeys: [apiKey.key],
      workerTokens: [workerToken.key],
      endpoints,
      acceptWorkerEndpoints: args.acceptWorkerEndpoints,
      logger,
      store: opened.store,
      ...(config?.models ? { models: config.models } : {}),
      ...(config?.batches ? { batches: config.batches } : {}),
      // GET /v2/<endpoint>/scaling (KEDA) answers from the config's scaling settings.
      ...(config ? { scaling: Object.fromEntries(config.endpoints.map((e) => [e.id, e])) } : {}),
      // Load-balancing endpoints (docs/load-balancing.md): their containers' own HTTP servers behind the proxy.
      ...(config?.endpoints.some((e) => e.http)
        ? { lb: Object.fromEntries(config.endpoints.flatMap((e) => (e.http ? [[e.id, e.http]] : []))) }
        : {}),
      ...(io.env['BERTH_LB_DOMAIN'] ? { lbDomain: io.env['BERTH_LB_DOMAIN'] } : {}),
      ...storeServerOptions(args.store),
      ...edge,
      webhooks: webhookOptions(edge.webhooks, config?.webhooks, args.webhookRetries),
      ...(keyStore ? { keyStore } : {}),
    },
    args.port,
    args.host,
    io,
  );
  if (typeof started === 'number') return started;
  const { server, url, recovered } = started;
  const signals = shutdownSignal({
    force: (s) => {
      io.stderr.write(`berth: ${s} again; exiting now\n`);
      process.exit(130);
    },
  });

  const dial = dialableUrl(url);
  const generated = c('dim', '  (generated for this run; set %s to choose one)');
  // One write, so a reader that sees the ready line also sees where the data lives.
  io.stdout.write(`${readyLine(url, endpoints, color)}\n${dataLine(opened.where, recovered)}\n`);
  io.stdout.write(`API key: ${apiKey.key}${apiKey.generated ? generated.replace('%s', 'BERTH_API_KEY') : ''}\n`);
  io.stdout.write(`Playground: ${dial}/ (paste the API key, or open ${dial}/#key=<API key>)\n`);
  io.stdout.write(
    `Worker token: ${workerToken.key}${workerToken.generated ? generated.replace('%s', 'BERTH_WORKER_TOKEN') : ''}\n`,
  );
  const ep = endpoints[0] ?? '<endpoint id>';
  io.stdout.write(
    `\nPoint a worker at it (any process whose code calls start() from @berth/worker):\n` +
      `  BERTH_URL=${dial} BERTH_ENDPOINT_ID=${ep} BERTH_WORKER_TOKEN=${workerToken.key} node --import tsx ./handler.ts\n`,
  );
  if (endpoints[0] !== undefined) {
    io.stdout.write(
      `\nThen call it:\n${curlExamples(url, apiKey.key, endpoints[0])
        .map((l) => `  ${l.startsWith('#') ? c('dim', l) : l}`)
        .join('\n')}\n`,
    );
  }
  if (images.size > 0 && config && keyStore) {
    scaler = await startScaling({
      args: args.scale,
      config,
      images,
      server,
      keyStore,
      store: opened.store,
      url: dial,
      logger,
      env: io.env,
      gpuDevices,
    });
    io.stdout.write(
      `\nScaling worker containers (docker): ${[...images].map(([ep, image]) => `${ep} -> ${image}`).join(', ')}\n`,
    );
  }
  io.stdout.write(c('dim', '\nPress Ctrl-C to stop.\n'));

  const signal = await signals.signal;
  logger.info(`${signal}: shutting down (press Ctrl-C again to force)`);
  // Worker containers keep running: the next start (or another replica) adopts them.
  await scaler?.stop();
  try {
    await server.close({ drainMs: DRAIN_MS });
  } catch (err) {
    logger.error('error while closing the control plane', { error: err instanceof Error ? err.message : String(err) });
  }
  await stopTracing(); // the spans still buffered are exported
  signals.dispose();
  logger.info('stopped');
  return EXIT.ok;
}

/**
 * Load-balancing endpoints run under `berth serve` as containers only (`--scale docker` and an image), on the host
 * network (the proxy reaches each at 127.0.0.1:`PORT`); one with a command alone runs under `berth dev`.
 */
function checkHttpEndpoints(config: ResolvedConfig, images: ReadonlyMap<string, string>): void {
  const problems: string[] = [];
  for (const e of config.endpoints) {
    if (!e.http) continue;
    if (!images.has(e.id))
      problems.push(
        `endpoints.${e.id}.type: a "type": "http" endpoint runs under berth serve --scale docker with an "image" (or --image ${e.id}=<image>), else under berth dev (docs/load-balancing.md)`,
      );
    else if (e.docker.network !== undefined && e.docker.network !== 'host')
      problems.push(
        `endpoints.${e.id}.docker.network: a "type": "http" endpoint's containers use the host network (the proxy reaches them at 127.0.0.1:$PORT); remove "network" or set it to "host"`,
      );
  }
  if (problems.length > 0)
    throw new ConfigError(`berth serve cannot run these load-balancing endpoints (${config.file})`, {
      file: config.file,
      problems,
    });
}
