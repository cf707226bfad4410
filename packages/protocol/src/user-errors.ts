// Errors a person fixes by changing what they wrote (options, environment, config file). Reported as the message
// alone, never with a stack: `berth` exits with code 2, the worker with code 1. (A bad command line is the CLI's
// own `UsageError`, in @berth/cli.)

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
