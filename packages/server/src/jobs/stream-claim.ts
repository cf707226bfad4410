import type { Store } from '../store/types.js';
import type { ChunkData } from '../core/job-event-kinds.js';
import type { Waiter } from './job-events.js';

/**
 * After a reader's wake-up: the chunks its events carried, claimed with one conditional write instead of read
 * back (`Store.claimStream`); or `undefined` when the reader must read the job and its chunks as usual (an event
 * without chunks: a change, a deletion, chunks too large for a notification, or a store without `claimStream`).
 * If another reader took some of them first, what is left comes from `takeStream`, in order.
 */
export async function claimPushed(store: Store, id: string, waiter: Waiter): Promise<unknown[] | undefined> {
  const { batches, complete } = waiter.takeChunks();
  if (!complete || !store.claimStream) return undefined;
  const out: unknown[] = [];
  for (const b of contiguous(batches)) {
    if (!(await store.claimStream(id, b.attempt, b.seq, b.seq + b.chunks.length)))
      return [...out, ...(await store.takeStream(id))];
    out.push(...b.chunks);
  }
  return out;
}

/** Batches that follow each other (same attempt, no gap) as one: a reader that fell behind claims them in one write. */
function contiguous(batches: ChunkData[]): ChunkData[] {
  const out: ChunkData[] = [];
  for (const b of batches) {
    const last = out[out.length - 1];
    if (last && last.attempt === b.attempt && last.seq + last.chunks.length === b.seq) last.chunks.push(...b.chunks);
    else out.push({ attempt: b.attempt, seq: b.seq, chunks: [...b.chunks] });
  }
  return out;
}
