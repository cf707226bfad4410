import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Logger } from '../../logger.js';
import { ConfigError, type ResolvedStartOptions } from '../../options.js';
import { executeWithRetry, NO_RETRY } from './retry.js';

/** Job id used in local single-shot mode. */
export const LOCAL_JOB_ID = 'local-test';

/** A test input found on the command line or in a `test_input.json`. */
export interface LocalTestInput {
  input: Record<string, unknown>;
  /** Where it came from: `--test-input` or the file path. */
  source: string;
}

/**
 * Finds the local test input: `--test-input '<json>'` (also `--test_input`, or `=<json>`) in `args`, else the
 * first `test_input.json` in `dirs`. Returns undefined when there is none; throws `ConfigError` when it is not
 * valid.
 *
 * @example findTestInput(['--test-input', '{"input":{"n":1}}'], []) // { input: { n: 1 }, source: '--test-input' }
 */
export function findTestInput(args: readonly string[], dirs: readonly string[]): LocalTestInput | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const m = /^--test[-_]input(?:=(.*))?$/s.exec(arg);
    if (!m) continue;
    const text = m[1] ?? args[i + 1];
    if (text === undefined)
      throw new ConfigError(`--test-input needs a JSON value, e.g. --test-input '{"input": {"prompt": "hi"}}'`);
    return { input: parseTestInput(text, '--test-input'), source: '--test-input' };
  }
  for (const dir of new Set(dirs.map((d) => resolve(d)))) {
    const file = join(dir, 'test_input.json');
    if (!existsSync(file)) continue;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
    }
    return { input: parseTestInput(text, file), source: file };
  }
  return undefined;
}

/** Directories searched for `test_input.json`: the entry script's, then the working directory. */
export function testInputDirs(argv: readonly string[] = process.argv, cwd: string = process.cwd()): string[] {
  const script = argv[1];
  return script ? [dirname(resolve(script)), cwd] : [cwd];
}

/**
 * Parses a test input: either `{"input": {...}}` (RunPod's test_input.json shape) or the input object itself.
 *
 * @example parseTestInput('{"prompt":"hi"}', 'x') // { prompt: 'hi' }
 */
export function parseTestInput(text: string, source: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${source} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (isObject(value) && 'input' in value) value = value.input;
  if (!isObject(value))
    throw new ConfigError(`${source} must hold a JSON object: {"input": {...}} or the input itself`);
  return value;
}

/** What local mode prints on stdout and the exit code. */
export interface LocalTestOutcome {
  body: { id: string; status: 'COMPLETED' | 'FAILED' | 'CANCELLED'; output?: unknown; error?: string };
  code: 0 | 1;
}

/**
 * Runs one job through the handler, as the live runtime would, logging chunks and progress to the logger.
 *
 * @example const { body, code } = await runLocalTest(resolved, { prompt: 'hi' }, log, signal);
 */
export async function runLocalTest(
  resolved: Pick<ResolvedStartOptions, 'handler' | 'returnAggregateStream'> &
    Partial<Pick<ResolvedStartOptions, 'inputSchema' | 'retry'>>,
  input: Record<string, unknown>,
  log: Logger,
  signal: AbortSignal = new AbortController().signal,
): Promise<LocalTestOutcome> {
  const jobLog = log.child({ jobId: LOCAL_JOB_ID });
  jobLog.info('running one job locally', { input });
  const result = await executeWithRetry(
    {
      handler: resolved.handler,
      job: { id: LOCAL_JOB_ID, input, attempt: 1 },
      signal,
      log: jobLog,
      returnAggregateStream: resolved.returnAggregateStream,
      inputSchema: resolved.inputSchema,
      onChunk: (chunk, seq) => jobLog.info('stream chunk', { seq, chunk }),
      onProgress: (progress) => jobLog.info('progress', { progress }),
    },
    resolved.retry ?? NO_RETRY,
  );
  if (result.status === 'COMPLETED')
    return { body: { id: LOCAL_JOB_ID, status: 'COMPLETED', output: result.output }, code: 0 };
  return { body: { id: LOCAL_JOB_ID, status: result.status, error: result.error }, code: 1 };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
