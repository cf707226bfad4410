import { describe, expect, it } from 'vitest';
import { ScriptedWorker, call, listening, untilStatus } from '../testing.test-helpers.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import type { JobRecord } from '../store/types.js';

/** Counts the claims that reach the store, and those that found nothing. */
class CountingStore extends MemoryStore {
  claims = 0;
  empty = 0;
  override async claim(endpointId: string, workerId: string, now: number): Promise<JobRecord | undefined> {
    this.claims++;
    const job = await super.claim(endpointId, workerId, now);
    if (!job) this.empty++;
    return job;
  }
}

describe('Dispatcher claims (memory store)', () => {
  it('claims once per job: no pump asks the store while its counts say the queue is empty', async () => {
    const store = new CountingStore();
    await using t = await listening({ store });
    const w = await ScriptedWorker.connect(t.url, { concurrency: 3 });
    await w.next('welcome');
    const ids: string[] = [];
    // A burst deeper than the worker's credits, then results one by one: each frees a credit and pumps.
    for (let i = 0; i < 8; i++)
      ids.push((await call(t.server, 'POST', '/v2/echo/run', { body: { input: { i } } })).body.id as string);
    for (let i = 0; i < 8; i++) {
      const a = await w.next('job.assign');
      w.send({ type: 'job.complete', id: a.id, attempt: a.attempt, output: { i } });
    }
    for (const id of ids) await untilStatus(t.server, 'echo', id, 'COMPLETED');
    expect(store.claims).toBe(8);
    expect(store.empty).toBe(0);
    await w.close();
  });
});
