/** A mistake in how the command was invoked (unknown command or flag, bad flag value). Exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  /** The command whose `--help` the message should point to, if any. */
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
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
