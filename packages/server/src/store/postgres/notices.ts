/**
 * Changes whose cluster notification went out inside their own statement (a chunk append, a batched finish):
 * the cluster bus asks here before it sends the same event again. Each key is taken once; entries are taken at
 * once, so the set stays tiny, and a stray one (an event never published) cannot pile up past `MAX`.
 */
export class NoticeLedger {
  private static readonly MAX = 1_000;
  private readonly keys = new Set<string>();

  add(key: string): void {
    if (this.keys.size >= NoticeLedger.MAX) this.keys.clear();
    this.keys.add(key);
  }

  /** Whether `key` was noted (answers true once). */
  take(key: string): boolean {
    return this.keys.delete(key);
  }
}
