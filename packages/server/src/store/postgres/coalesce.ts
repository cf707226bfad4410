interface Entry<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for one kind of statement: items added in the same event-loop turn, and items added while
 * `maxInFlight` statements of this kind are running, go out together as one statement when a slot frees. At
 * concurrency 1 an item waits for nothing but the end of its turn; at c=50 fifty inserts become a few multi-row
 * statements (one round trip and one WAL flush each) instead of fifty. Each item's promise settles only when the
 * statement that holds it has answered (committed: every statement here is its own transaction).
 */
export class Coalescer<T, R> {
  private pending: Entry<T, R>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    /** Runs one statement for `items`; answers one result per item, in order. */
    private readonly run: (items: T[]) => Promise<R[]>,
    private readonly maxInFlight: number,
    private readonly maxBatch = 1_000,
  ) {}

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.kick();
    });
  }

  /** Whether no statement of this kind is running: items added now go out alone at the end of this turn. */
  idle(): boolean {
    return this.inFlight === 0;
  }

  private kick(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.pending.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.send();
    });
  }

  private async send(): Promise<void> {
    if (this.inFlight >= this.maxInFlight || this.pending.length === 0) return;
    const batch = this.pending.splice(0, this.maxBatch);
    this.inFlight++;
    try {
      const out = await this.run(batch.map((e) => e.item));
      batch.forEach((e, i) => e.resolve(out[i]!));
    } catch (err) {
      for (const e of batch) e.reject(err);
    } finally {
      this.inFlight--;
      this.kick();
    }
  }
}
