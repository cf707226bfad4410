import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { findConfigFile, loadConfig } from '../config/index.js';
import type { Io } from '../internal/io.js';
import { EXIT, UsageError } from '../internal/usage-error.js';

export const TEST_HELP = `Usage: berth test [<handler file>] [--input <json> | --file <test_input.json>] [--config <file>] [--endpoint <id>]

Runs one job through a handler on this machine, exactly as the worker runtime's local test mode does
(\`node --import tsx <handler> --test-input ...\`, no control plane), prints the job result as JSON and exits
0 when it COMPLETED, 1 when it FAILED or the handler crashed. For CI pipelines.

Which handler: the file given, else the worker of --endpoint (default: the first endpoint) in the config file.
Which input: --input, else --file, else test_input.json next to the handler, else in the current folder.
Both {"input": {...}} (RunPod's test_input.json) and the input object itself are accepted.

Options:
  -i, --input <json>      the job input as JSON
  -f, --file <path>       a JSON file holding the input
  -c, --config <file>     config file (default: berth.config.* in the current folder)
  -e, --endpoint <id>     which endpoint's handler to run (default: the first in the config)
  -h, --help              show this help
`;

export interface TestArgs {
  help: boolean;
  handler: string | undefined;
  input: string | undefined;
  file: string | undefined;
  config: string | undefined;
  endpoint: string | undefined;
}

export function parseTestArgs(argv: readonly string[]): TestArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        input: { type: 'string', short: 'i' },
        file: { type: 'string', short: 'f' },
        config: { type: 'string', short: 'c' },
        endpoint: { type: 'string', short: 'e' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err), 'test');
  }
  const { values: v, positionals } = parsed;
  if (positionals.length > 1)
    throw new UsageError(`one handler file at most (got ${positionals.length}: ${positionals.join(' ')})`, 'test');
  if (v.input !== undefined && v.file !== undefined) throw new UsageError('give --input or --file, not both', 'test');
  return {
    help: v.help === true,
    handler: positionals[0],
    input: v.input,
    file: v.file,
    config: v.config,
    endpoint: v.endpoint,
  };
}

/** `berth test`: resolves with the handler's exit code (0 completed, 1 failed), 2 for bad usage. */
export async function runTest(argv: readonly string[], io: Io): Promise<number> {
  const args = parseTestArgs(argv);
  if (args.help) {
    io.stdout.write(TEST_HELP);
    return EXIT.ok;
  }
  // 1. The handler file, and the folder it runs in.
  const { handler, cwd } = await findHandler(args, io.cwd);
  if (!existsSync(handler)) throw new UsageError(`handler file not found: ${handler}`, 'test');

  // 2. The input, checked here so that a typo is a usage error (exit 2), not a failed job.
  const input = readInput(args, handler, io.cwd);

  // 3. One job through the worker runtime's local mode, in a child process like a real worker.
  const env: NodeJS.ProcessEnv = { ...io.env };
  for (const k of ['BERTH_URL', 'BERTH_ENDPOINT_ID', 'BERTH_WORKER_TOKEN', 'BERTH_WORKER_ID']) delete env[k];
  const hook = new URL('../internal/load-error-hook.js', import.meta.url).href;
  const child = spawn(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), '--import', hook, handler, '--test-input', JSON.stringify({ input })],
    {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout.on('data', (d: Buffer) => io.stdout.write(d));
  child.stderr.on('data', (d: Buffer) => io.stderr.write(d));
  const code = await new Promise<number>((r) => {
    child.once('error', (err) => {
      io.stderr.write(`berth test: could not start node: ${err.message}\n`);
      r(EXIT.failure);
    });
    child.once('close', (c, signal) => r(c ?? (signal ? EXIT.failure : EXIT.failure)));
  });
  return code === 0 ? EXIT.ok : EXIT.failure;
}

async function findHandler(args: TestArgs, cwd: string): Promise<{ handler: string; cwd: string }> {
  if (args.handler !== undefined) {
    if (args.config !== undefined || args.endpoint !== undefined)
      throw new UsageError('give a handler file or --config/--endpoint, not both', 'test');
    const handler = resolve(cwd, args.handler);
    return { handler, cwd: dirname(handler) };
  }
  const config = await loadConfig(findConfigFile(args.config, cwd));
  const ep = args.endpoint === undefined ? config.endpoints[0] : config.endpoints.find((e) => e.id === args.endpoint);
  if (!ep)
    throw new UsageError(
      `no endpoint "${args.endpoint}" in ${config.file} (endpoints: ${config.endpoints.map((e) => e.id).join(', ')})`,
      'test',
    );
  return { handler: ep.worker, cwd: config.dir };
}

function readInput(args: TestArgs, handler: string, cwd: string): Record<string, unknown> {
  let text: string;
  let source: string;
  if (args.input !== undefined) {
    text = args.input;
    source = '--input';
  } else {
    const file =
      args.file !== undefined
        ? resolve(cwd, args.file)
        : [join(dirname(handler), 'test_input.json'), join(cwd, 'test_input.json')].find((f) => existsSync(f));
    if (file === undefined)
      throw new UsageError(
        `no input: pass --input '{"input": {...}}' or --file, or put a test_input.json next to ${handler}`,
        'test',
      );
    if (!existsSync(file)) throw new UsageError(`--file: not found: ${file}`, 'test');
    text = readFileSync(file, 'utf8');
    source = file;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${source} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`, 'test');
  }
  if (isObject(value) && 'input' in value) value = value.input;
  if (!isObject(value))
    throw new UsageError(`${source} must hold a JSON object: {"input": {...}} or the input itself`, 'test');
  return value;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
