import type { WorkerMessage } from '@berth/protocol';
import type { CoreContext } from './context.js';
import { StoreUnavailableError } from '../errors.js';

type StreamMessage = Extract<WorkerMessage, { type: 'job.stream' }>;

interface Pending {
  seq: number;
  chunks: unknown[];
  attempt: number;
  /** Called when the store could not be reached (the worker is disconnected, as for any unstored message). */
  unavailable?: () => void;
}

/**
 * Stores a job's stream chunks one append at a time, merging the chunks that arrive while an append is in
 * flight into the next one: a worker streaming faster than the store commits costs fewer, larger appends
 * instead of a growing backlog of small ones (each chunk would otherwise wait for all before it). The worker's
 * other messages about the job (progress, result) wait for its chunks with `flushed`, so order is kept.
 */
export class StreamAppender {
  private readonly pending = new Map<string, Pending[]>();
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly ctx: CoreContext) {}

  /** Queues the chunks; returns at once (the append runs in the background, in order). */
  add(msg: StreamMessage, unavailable?: () => void): void {
    let list = this.pending.get(msg.id);
    if (!list) this.pending.set(msg.id, (list = []));
    const last = list[list.length - 1];
    const end = last ? last.seq + last.chunks.length : -1;
    if (last && last.attempt === msg.attempt && msg.seq <= end && msg.seq + msg.chunks.length > end) {
      last.chunks.push(...msg.chunks.slice(end - msg.seq)); // contiguous (or overlapping): one append
    } else
      list.push({
        seq: msg.seq,
        chunks: [...msg.chunks],
        attempt: msg.attempt,
        ...(unavailable ? { unavailable } : {}),
      }); // the store decides
    if (!this.running.has(msg.id)) this.running.set(msg.id, this.drain(msg.id));
  }

  /** Whether chunks of the job are still being stored. */
  busy(id: string): boolean {
    return this.running.has(id);
  }

  /** Resolves once every chunk queued for the job so far is stored (or refused). */
  async flushed(id: string): Promise<void> {
    while (this.running.has(id)) await this.running.get(id);
  }

  private async drain(id: string): Promise<void> {
    const { store, events, logger } = this.ctx;
    try {
      for (let p = this.next(id); p; p = this.next(id)) {
        try {
          const appending = store.appendStream(id, p.attempt, p.seq, p.chunks);
          // SQLite: readers are woken as the chunks are written, so their take joins the append's commit (one commit
          // for both; they still send nothing before it).
          if (store.sharesTurnCommit) events.emit(id, 'chunk');
          const n = await appending;
          if (n > 0) this.ctx.eventWebhooks?.output(id, p.chunks.slice(-n));
          // Other stores: the fresh chunks travel with the event, and readers deliver them without reading them back.
          if (n > 0 && !store.sharesTurnCommit)
            events.emit(id, 'chunk', {
              attempt: p.attempt,
              seq: p.seq + p.chunks.length - n,
              chunks: p.chunks.slice(-n),
            });
        } catch (err) {
          logger.error('stream chunks not stored', { jobId: id, attempt: p.attempt, err });
          if (err instanceof StoreUnavailableError) p.unavailable?.();
        }
      }
    } finally {
      this.running.delete(id);
    }
  }

  private next(id: string): Pending | undefined {
    const list = this.pending.get(id);
    const p = list?.shift();
    if (list && list.length === 0) this.pending.delete(id);
    return p;
  }
}
