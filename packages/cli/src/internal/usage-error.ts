// One UsageError for the whole toolkit (@berth/protocol); re-exported here for the commands' imports.
export { UsageError } from '@berth/protocol';

/** Exit codes of the `berth` binary. */
export const EXIT = {
  ok: 0,
  /** A runtime failure (port in use, server failed to start). */
  failure: 1,
  /** Bad usage or bad configuration: fix the command line or the config file. */
  usage: 2,
} as const;
