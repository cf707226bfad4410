import { describe, expect, it } from 'vitest';
import { silentLogger } from '@berth/protocol/log';
import { MemoryStore } from '../store/memory/memory-store.js';
import type { CoreContext } from './context.js';
import type { ChunkData } from '../core/job-event-kinds.js';
import { JobEvents } from './job-events.js';
import { StreamAppender } from './stream-appender.js';

/** A memory store whose appends take a while, counting them. */
class SlowStore extends MemoryStore {
  appends: number[][] = [];
  override async appendStream(id: string, attempt: number, seq: number, chunks: unknown[]): Promise<number> {
    this.appends.push([seq, chunks.length]);
    await new Promise((r) => setTimeout(r, 20));
    return super.appendStream(id, attempt, seq, chunks);
  }
}

describe('StreamAppender', () => {
  it('merges the chunks that arrive while an append runs into the next one; events carry them in order', async () => {
    const store = new SlowStore();
    const now = Date.now();
    await store.insert({
      id: 'j',
      endpointId: 'ep',
      status: 'IN_QUEUE',
      input: {},
      executionTimeout: 60_000,
      lowPriority: false,
      sync: false,
      attempt: 0,
      retries: 0,
      createdAt: now,
      queuedAt: now,
      expiresAt: now + 60_000,
    });
    await store.claim('ep', 'w', now);
    const events = new JobEvents();
    const seen: ChunkData[] = [];
    events.subscribe('j', (_k, d) => d && seen.push(d));
    const appender = new StreamAppender({ store, events, logger: silentLogger } as unknown as CoreContext);
    appender.add({ type: 'job.stream', id: 'j', attempt: 1, seq: 0, chunks: ['a'] });
    appender.add({ type: 'job.stream', id: 'j', attempt: 1, seq: 1, chunks: ['b'] });
    appender.add({ type: 'job.stream', id: 'j', attempt: 1, seq: 1, chunks: ['b', 'c'] }); // re-sent b
    appender.add({ type: 'job.stream', id: 'j', attempt: 1, seq: 3, chunks: ['d'] });
    await appender.flushed('j');
    expect(store.appends).toEqual([
      [0, 1],
      [1, 3],
    ]);
    expect(seen).toEqual([
      { attempt: 1, seq: 0, chunks: ['a'] },
      { attempt: 1, seq: 1, chunks: ['b', 'c', 'd'] },
    ]);
    expect(await store.takeStream('j')).toEqual(['a', 'b', 'c', 'd']);
  });
});
