/**
 * How long an endpoint's queue has held jobs, from the queue depths a scaler sees tick by tick: the time since it
 * was last seen empty (an upper bound of the oldest queued job's wait). The `queue-delay` scaler's input.
 */
export class QueueWait {
  readonly #since = new Map<string, number>();

  /** Records one look at the queue; returns `queuedForMs` for `decide` (undefined when it is empty). */
  observe(endpointId: string, inQueue: number, now: number): number | undefined {
    if (inQueue === 0) {
      this.#since.delete(endpointId);
      return undefined;
    }
    const since = this.#since.get(endpointId) ?? now;
    this.#since.set(endpointId, since);
    return now - since;
  }
}
