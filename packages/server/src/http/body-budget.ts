import { BerthError } from '@berth/protocol';

/** Seconds a client refused for memory (`overloaded`) is told to wait before retrying. */
export const OVERLOADED_RETRY_AFTER_S = 1;

/**
 * One budget for the bytes of request bodies held by the process at once (received, being parsed, or waiting
 * for their answer): a request whose body would pass it is refused with 503 `overloaded` and `Retry-After`
 * instead of letting memory grow with the number of concurrent large bodies. A request holds what it received
 * until its answer is sent (a `/runsync` keeps its input alive while it waits).
 */
export class BodyBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  /** Bytes held now. */
  get inFlight(): number {
    return this.used;
  }

  /** Takes `n` bytes, or throws 503 `overloaded` (taking nothing) when they do not fit. */
  take(n: number): void {
    if (this.used + n > this.limit) throw overloaded(this.limit);
    this.used += n;
  }

  give(n: number): void {
    this.used = Math.max(0, this.used - n);
  }
}

export function overloaded(limit: number): BerthError {
  return new BerthError(
    'overloaded',
    `the server holds its limit of ${limit} bytes of request bodies in flight; retry in ${OVERLOADED_RETRY_AFTER_S} s`,
    { limit },
  );
}
