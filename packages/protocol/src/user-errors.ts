// Errors a person fixes by changing what they wrote (options, environment, config file, command line). Both are
// reported as their message alone, never with a stack: `berth` exits with code 2, the worker with code 1.

import { BerthError } from './errors.js';

/**
 * A bad option, environment variable or config file; the message names it and the bad value. One class for every
 * package (worker `start()` options, `createServer` options, `berth.config.json`); it is a `BerthError` with code
 * `invalid_request`, so where one reaches the wire (a server option checked per request) it maps to a 400.
 *
 * @example throw new ConfigError('BERTH_CONCURRENCY must be a whole number from 1 to 1024 (got "four")');
 */
export class ConfigError extends BerthError {
  override readonly name = 'ConfigError';
  /** The config file, when the problem is in one. */
  readonly file: string | undefined;
  /** One line per problem, each starting with the dotted path of the bad field (listed under the message). */
  readonly problems: string[];
  /** `cause`: the error this one wraps (a JSON parse error, a failed read), kept for logs (ES2022 `ErrorOptions`). */
  constructor(message: string, options: { file?: string; problems?: string[]; cause?: unknown } = {}) {
    const problems = options.problems ?? [];
    super(
      'invalid_request',
      problems.length ? `${message}\n${problems.map((p) => `  - ${p}`).join('\n')}` : message,
      undefined,
      'cause' in options ? { cause: options.cause } : undefined,
    );
    this.file = options.file;
    this.problems = problems;
  }
}

/**
 * A mistake in how a command was invoked (unknown command or flag, bad flag value); printed with a pointer to
 * `--help`, exit code 2.
 *
 * @example throw new UsageError('--port must be a number from 0 to 65535 (got "x")', 'dev');
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  /** The command whose `--help` the message should point to, if any. */
  readonly command: string | undefined;
  constructor(message: string, command?: string, options?: ErrorOptions) {
    super(message, options);
    this.command = command;
  }
}
