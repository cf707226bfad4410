/**
 * An abort switch whose `AbortSignal` is made on first use: most handlers never read `job.signal`, and an
 * `AbortController` (an `EventTarget`) was the largest per-job allocation left in the worker. `aborted` and
 * `reason` answer without one; a signal made after `abort()` is aborted at once, with the same reason.
 *
 * @example const a = new LazyAbort(); a.abort(new Error('cancelled')); a.signal.aborted // true
 */
export class LazyAbort {
  aborted = false;
  private controller: AbortController | undefined;
  private why: unknown;

  get reason(): unknown {
    return this.why;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.why = reason;
    this.controller?.abort(reason);
  }
}

/** The real signal of either kind. */
export function signalOf(signal: AbortSignal | LazyAbort): AbortSignal {
  return signal instanceof LazyAbort ? signal.signal : signal;
}
