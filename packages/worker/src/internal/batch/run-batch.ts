import { describeValue } from '@berth/protocol';
import type { BatchHandler } from '../../batch.js';
import { asStreamSource, isThenable, type StreamSource } from '../execute/handler-kind.js';
import type { BatchSlot } from './batch-slot.js';

/**
 * Calls the batch handler once with the jobs of `slots` and settles each slot: its output, the `Error` in its slot,
 * or (the handler threw, or broke the contract) the same error for every slot. A streaming handler's chunks go to
 * their job's slot as they come. Never throws.
 */
export async function runBatch(handler: BatchHandler, slots: readonly BatchSlot[]): Promise<void> {
  try {
    let value: unknown = handler(slots.map((s) => s.job));
    if (isThenable(value)) value = await value;
    const source = asStreamSource(value);
    if (source) value = await pumpChunks(source, slots);
    if (value === undefined && source) {
      for (const slot of slots) slot.resolve(undefined); // each job's output: its chunks (streaming rules)
      return;
    }
    if (!Array.isArray(value) || value.length !== slots.length) {
      throw new TypeError(
        `the batch handler must return an array of ${slots.length} outputs, one per job in order (got ${describeValue(value)}${Array.isArray(value) ? ` of length ${value.length}` : ''})`,
      );
    }
    slots.forEach((slot, i) => {
      const out: unknown = value[i];
      if (out instanceof Error) slot.reject(out);
      else slot.resolve(out);
    });
  } catch (err) {
    for (const slot of slots) slot.reject(err);
  }
}

/** Routes every `{ index, chunk }` of a streaming batch handler to its job; returns the handler's return value. */
async function pumpChunks(source: StreamSource, slots: readonly BatchSlot[]): Promise<unknown> {
  const it = source.iterator;
  try {
    for (;;) {
      const step = source.kind === 'async' ? await source.iterator.next() : source.iterator.next();
      if (step.done) return step.value;
      const item: unknown = source.kind === 'sync' && isThenable(step.value) ? await step.value : step.value;
      const index = (item as { index?: unknown } | null)?.index;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= slots.length) {
        throw new TypeError(
          `a streaming batch handler must yield { index, chunk } with index 0-${slots.length - 1} (got ${describeValue(item)})`,
        );
      }
      const chunk = (item as { chunk?: unknown }).chunk;
      if (!(slots[index] as BatchSlot).chunk(chunk)) {
        throw new TypeError(
          'the batch handler yielded a chunk, but it is not a generator function: write it as async function* (jobs) to stream',
        );
      }
      // A sync generator would otherwise run to the end in one tick: let sockets and cancels through.
      if (source.kind === 'sync') await new Promise((resolve) => setImmediate(resolve));
      if (slots.every((s) => s.state === 'settled')) {
        await it.return?.(undefined); // every job left (cancelled): stop the batch
        return undefined;
      }
    }
  } catch (err) {
    try {
      await it.return?.(undefined);
    } catch {
      // the generator's own cleanup failed; the batch already failed
    }
    throw err;
  }
}
