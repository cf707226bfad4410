import { ConfigError } from './config/index.js';
import { DEV_HELP, runDev } from './commands/dev.js';
import { SERVE_HELP, runServe } from './commands/serve.js';
import { KEYS_HELP, runKeys } from './commands/keys.js';
import { TEST_HELP, runTest } from './commands/test.js';
import { BUILD_HELP, runBuild } from './commands/build.js';
import { processIo, type Io } from './internal/io.js';
import { EXIT, UsageError } from './internal/usage-error.js';
import { cliVersion } from './internal/version.js';

interface Command {
  summary: string;
  help: string;
  run: (argv: readonly string[], io: Io) => Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  dev: { summary: 'run the queue API and your workers locally (scaling, hot reload)', help: DEV_HELP, run: runDev },
  serve: { summary: 'run only the control plane; workers connect from anywhere', help: SERVE_HELP, run: runServe },
  keys: { summary: 'create, list and revoke API keys in the data folder', help: KEYS_HELP, run: runKeys },
  test: {
    summary: 'run one job through a handler locally; exit 0 if it completed, 1 if not',
    help: TEST_HELP,
    run: runTest,
  },
  build: {
    summary: 'bundle workers into deployable folders with Dockerfiles (CPU and CUDA)',
    help: BUILD_HELP,
    run: runBuild,
  },
};

export const MAIN_HELP = `berth: queue-based inference endpoints, on your machine

Usage: berth <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, cmd]) => `  ${name.padEnd(8)}${cmd.summary}`)
  .join('\n')}

Options:
  -h, --help     show this help (berth <command> --help for a command's options)
  -v, --version  print the version

Quick start:
  berth dev --config berth.config.json
`;

/**
 * Runs the `berth` command line and resolves with the exit code: 0 ok, 1 runtime failure, 2 bad usage or
 * bad config.
 */
export async function main(argv: readonly string[], io: Io = processIo()): Promise<number> {
  const [first, ...rest] = argv;
  try {
    if (first === undefined) {
      io.stderr.write(MAIN_HELP);
      return EXIT.usage;
    }
    if (first === '--help' || first === '-h' || first === 'help') {
      const topic = first === 'help' ? rest[0] : undefined;
      io.stdout.write(topic && COMMANDS[topic] ? COMMANDS[topic].help : MAIN_HELP);
      return EXIT.ok;
    }
    if (first === '--version' || first === '-v' || first === 'version') {
      io.stdout.write(`${cliVersion()}\n`);
      return EXIT.ok;
    }
    if (first.startsWith('-')) throw new UsageError(`unknown option "${first}" (options go after the command)`);
    const command = Object.hasOwn(COMMANDS, first) ? COMMANDS[first] : undefined;
    if (!command) throw new UsageError(`unknown command "${first}" (commands: ${Object.keys(COMMANDS).join(', ')})`);
    return await command.run(rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      const hint = err.command ? `berth ${err.command} --help` : 'berth --help';
      io.stderr.write(`berth: ${err.message}\nRun \`${hint}\` for usage.\n`);
      return EXIT.usage;
    }
    if (err instanceof ConfigError) {
      io.stderr.write(`berth: ${err.message}\n`);
      return EXIT.usage;
    }
    io.stderr.write(`berth: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return EXIT.failure;
  }
}
