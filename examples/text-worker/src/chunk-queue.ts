/** A small async queue: producers push, one consumer iterates until `close()` (or `fail()`). */
export class ChunkQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private closed = false;
  private error: { thrown: unknown } | undefined;
  private wake: (() => void) | undefined;

  push(item: T): void {
    this.items.push(item);
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  fail(err: unknown): void {
    this.error = { thrown: err ?? new Error('failed') };
    this.close();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.items.length) {
        yield this.items.shift()!;
        continue;
      }
      if (this.error) throw this.error.thrown;
      if (this.closed) return;
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
  }
}
