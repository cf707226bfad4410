import { BerthError } from '@berth/protocol';

/**
 * The typed errors crossing the server's layer boundaries. Each extends `BerthError` when it reaches clients (its
 * stable code and HTTP status then come from the protocol's table through `toErrorBody`, the one mapping of any
 * thrown value to the wire shape); the others stay internal.
 */

/** A bad `createServer` option (or an option of one of its parts): the one `ConfigError` of every package. */
export { ConfigError } from '@berth/protocol';

/**
 * The store cannot be reached now (a database connection error); nothing was decided. Code `unavailable` (503):
 * clients retry, and a worker whose report hit it is disconnected (1013) so it sends its results again later.
 * Stores throw it; the dispatcher, the worker reports and the gateway check for it with `instanceof`.
 */
export class StoreUnavailableError extends BerthError {
  constructor(message: string, options?: ErrorOptions) {
    super('unavailable', message, undefined, options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * `Store.insert` of a job whose id is already stored. Atomic in every store (a primary key in SQLite and
 * PostgreSQL): of two replicas inserting the same id at once, exactly one succeeds. Idempotency keys rely on it.
 * Internal: the job service answers the stored job instead (a plain 500 if one ever escapes).
 */
export class DuplicateJobError extends Error {
  constructor(
    readonly jobId: string,
    options?: ErrorOptions,
  ) {
    super(`duplicate job id ${jobId}`, options);
    this.name = 'DuplicateJobError';
  }
}

/**
 * An optional peer dependency (a database driver) is not installed, or its native addon cannot be loaded. Code
 * `missing_dependency` (stable, not a wire code: it stops startup, never a request); `packageName` says what to
 * install.
 */
export class MissingDependencyError extends Error {
  readonly code = 'missing_dependency';
  constructor(
    readonly packageName: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'MissingDependencyError';
  }
}
