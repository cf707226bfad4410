import type { Job } from '../../handler.js';

/**
 * One job's place in a batch: what its per-job handler call waits for. A plain slot settles once with the job's
 * output or error; a streaming slot also hands over chunks, in order, to the per-job generator reading them.
 * Settling is final: later outputs, chunks and errors for the slot are dropped (a cancelled job already left).
 */
export class BatchSlot {
  state: 'forming' | 'running' | 'settled' = 'forming';
  private readonly chunks: unknown[] = [];
  private outcome: { ok: true; value: unknown } | { ok: false; error: unknown } | undefined;
  private wake: (() => void) | undefined;
  private readonly abortListener: (() => void) | undefined;

  constructor(
    readonly job: Job,
    /** performance.now() when the job joined. */
    readonly arrived: number,
    /** Whether the per-job call reads chunks (a streaming batch handler). */
    readonly streaming: boolean,
    /** Called when the job's signal fires before the slot settled. */
    onAbort: (slot: BatchSlot) => void,
  ) {
    if (job.signal.aborted) return;
    this.abortListener = () => onAbort(this);
    job.signal.addEventListener('abort', this.abortListener, { once: true });
  }

  /** Adds a stream chunk for this job; false when the slot does not stream. Dropped once settled. */
  chunk(value: unknown): boolean {
    if (!this.streaming) return false;
    if (this.state === 'settled') return true;
    this.chunks.push(value);
    this.notify();
    return true;
  }

  resolve(value: unknown): void {
    this.settle({ ok: true, value });
  }

  reject(error: unknown): void {
    this.settle({ ok: false, error });
  }

  /** The job's output (plain slot): resolves or rejects once the slot settles. */
  result(): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!this.outcome) return void (this.wake = check);
        if (this.outcome.ok) resolve(this.outcome.value);
        else reject(this.outcome.error);
      };
      check();
    });
  }

  /** The job's stream (streaming slot): yields its chunks; returns its output, or throws its error. */
  async *stream(): AsyncGenerator<unknown, unknown> {
    for (;;) {
      if (this.chunks.length > 0) {
        yield this.chunks.shift();
        continue;
      }
      if (this.outcome) {
        if (this.outcome.ok) return this.outcome.value;
        throw this.outcome.error;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private settle(outcome: NonNullable<BatchSlot['outcome']>): void {
    if (this.state === 'settled') return;
    this.state = 'settled';
    // A failure drops the chunks not yet read: the job is over (cancelled, or the batch threw).
    if (!outcome.ok) this.chunks.length = 0;
    this.outcome = outcome;
    if (this.abortListener) this.job.signal.removeEventListener('abort', this.abortListener);
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
