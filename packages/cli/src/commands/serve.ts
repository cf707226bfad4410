import { parseEndpointList, parseFlags, parseHost, parseLogLevel, parsePort, type LogLevel } from '../args.js';
import { curlExamples, dialableUrl, readyLine } from '../internal/banner.js';
import { createConsoleLogger } from '../internal/console-logger.js';
import { paint, useColor, type Io } from '../internal/io.js';
import { keyFromEnv } from '../internal/keys.js';
import { startServer } from '../internal/listen.js';
import { shutdownSignal } from '../internal/signals.js';
import { EXIT } from '../internal/usage-error.js';

export const SERVE_HELP = `Usage: berth serve [--port <n>] [--host <addr>] [--endpoint <id,...>] [--log-level <level>]

Runs only the control plane (the queue API and the worker WebSocket). Start workers yourself, anywhere,
with the environment variables it prints. Stop it with Ctrl-C.

Options:
  -p, --port <n>          port to listen on (default 8080; 0 picks a free port)
      --host <addr>       address to listen on (default 127.0.0.1; 0.0.0.0 for all interfaces)
  -e, --endpoint <ids>    endpoint ids known from the start, comma-separated or repeated
                          (workers register their own endpoint when they connect)
      --log-level <level> debug, info, warn or error (default info, or BERTH_LOG_LEVEL)
  -h, --help              show this help

Environment:
  BERTH_API_KEY           the API key clients must send (default: a fresh key, printed at start)
  BERTH_WORKER_TOKEN      the token workers must present (default: a fresh token, printed at start)
  BERTH_LOG_LEVEL         default of --log-level
`;

export interface ServeArgs {
  help: boolean;
  port: number;
  host: string;
  endpoints: string[];
  logLevel: LogLevel;
}

export function parseServeArgs(argv: readonly string[], env: NodeJS.ProcessEnv): ServeArgs {
  const v = parseFlags('serve', argv, {
    port: { type: 'string', short: 'p' },
    host: { type: 'string' },
    endpoint: { type: 'string', short: 'e', multiple: true },
    'log-level': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  return {
    help: v.help === true,
    port: parsePort('serve', v.port as string | undefined, 8080),
    host: parseHost('serve', v.host as string | undefined, '127.0.0.1'),
    endpoints: parseEndpointList('serve', v.endpoint as string[] | undefined),
    logLevel: parseLogLevel('serve', v['log-level'] as string | undefined, env),
  };
}

const DRAIN_MS = 10_000;

/** `berth serve`: the control plane alone. Resolves with the exit code. */
export async function runServe(argv: readonly string[], io: Io): Promise<number> {
  const args = parseServeArgs(argv, io.env);
  if (args.help) {
    io.stdout.write(SERVE_HELP);
    return EXIT.ok;
  }
  const color = useColor(io.stdout, io.env);
  const c = paint(color);
  const logger = createConsoleLogger({ level: args.logLevel, io, color });
  const apiKey = keyFromEnv(io.env, 'BERTH_API_KEY', 'berth_');
  const workerToken = keyFromEnv(io.env, 'BERTH_WORKER_TOKEN', 'berthw_');

  const started = await startServer(
    { apiKeys: [apiKey.key], workerTokens: [workerToken.key], endpoints: args.endpoints, logger },
    args.port,
    args.host,
    io,
  );
  if (typeof started === 'number') return started;
  const { server, url } = started;
  const signals = shutdownSignal({
    force: (s) => {
      io.stderr.write(`berth: ${s} again; exiting now\n`);
      process.exit(130);
    },
  });

  const dial = dialableUrl(url);
  const generated = c('dim', '  (generated for this run; set %s to choose one)');
  io.stdout.write(`${readyLine(url, args.endpoints, color)}\n`);
  io.stdout.write(`API key: ${apiKey.key}${apiKey.generated ? generated.replace('%s', 'BERTH_API_KEY') : ''}\n`);
  io.stdout.write(`Worker token: ${workerToken.key}${workerToken.generated ? generated.replace('%s', 'BERTH_WORKER_TOKEN') : ''}\n`);
  const ep = args.endpoints[0] ?? '<endpoint id>';
  io.stdout.write(
    `\nPoint a worker at it (any process whose code calls start() from @berth/worker):\n` +
      `  BERTH_URL=${dial} BERTH_ENDPOINT_ID=${ep} BERTH_WORKER_TOKEN=${workerToken.key} node --import tsx ./handler.ts\n`,
  );
  if (args.endpoints[0] !== undefined) {
    io.stdout.write(`\nThen call it:\n${curlExamples(url, apiKey.key, args.endpoints[0]).map((l) => `  ${l.startsWith('#') ? c('dim', l) : l}`).join('\n')}\n`);
  }
  io.stdout.write(c('dim', '\nPress Ctrl-C to stop.\n'));

  const signal = await signals.signal;
  logger.info(`${signal}: shutting down (press Ctrl-C again to force)`);
  try {
    await server.close({ drainMs: DRAIN_MS });
  } catch (err) {
    logger.error('error while closing the control plane', { error: err instanceof Error ? err.message : String(err) });
  }
  signals.dispose();
  logger.info('stopped');
  return EXIT.ok;
}
