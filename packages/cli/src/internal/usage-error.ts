/**
 * A mistake in how a command was invoked (unknown command or flag, bad flag value); printed with a pointer to
 * `--help`, exit code 2. A CLI concern, so it lives here and not in the wire package (@berth/protocol).
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

/** Exit codes of the `berth` binary. */
export const EXIT = {
  ok: 0,
  /** A runtime failure (port in use, server failed to start). */
  failure: 1,
  /** Bad usage or bad configuration: fix the command line or the config file. */
  usage: 2,
} as const;
