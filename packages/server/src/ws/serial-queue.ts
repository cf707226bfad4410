/** A task of a `SerialQueue`: synchronous, or a promise the next task waits for. */
export type SerialTask = () => Promise<void> | void;

/**
 * Runs tasks one after another, in the order pushed (a worker's messages are applied in order), without a
 * promise chain per task: a task starts at once when none is running, otherwise it waits in a list; only a
 * task that returns a promise holds the next ones back, until it settles. A task that throws or rejects goes to
 * `onError` and the next one runs.
 */
export class SerialQueue {
  private waiting: (SerialTask | undefined)[] = [];
  private head = 0;
  private running = false;
  private readonly resume = (): void => {
    this.running = false;
    this.drain();
  };
  private readonly fail = (err: unknown): void => {
    this.onError(err);
    this.resume();
  };

  constructor(private readonly onError: (err: unknown) => void) {}

  push(task: SerialTask): void {
    this.waiting.push(task);
    if (!this.running) this.drain();
  }

  /** Whether no task is running or waiting. */
  get idle(): boolean {
    return !this.running && this.head === this.waiting.length;
  }

  private drain(): void {
    this.running = true;
    while (this.head < this.waiting.length) {
      const task = this.waiting[this.head]!;
      this.waiting[this.head++] = undefined;
      if (this.head === this.waiting.length) {
        this.waiting = [];
        this.head = 0;
      }
      let pending: Promise<void> | void;
      try {
        pending = task();
      } catch (err) {
        this.onError(err);
        continue;
      }
      if (pending) {
        pending.then(this.resume, this.fail);
        return;
      }
    }
    this.running = false;
  }
}
