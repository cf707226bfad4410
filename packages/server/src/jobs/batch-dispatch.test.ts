import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory/memory-store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { API_KEY, ScriptedWorker, call, listening, until } from '../testing.test-helpers.js';

/** Groups the job.assign frames a worker receives by the event-loop turn they arrive in (one socket read each). */
function assignGroups(w: ScriptedWorker): { ids: string[][] } {
  const groups = { ids: [] as string[][] };
  let open: string[] | undefined;
  w.ws.on('message', (data) => {
    const msg = JSON.parse(data.toString()) as { type: string; id?: string };
    if (msg.type !== 'job.assign') return;
    if (!open) {
      open = [];
      groups.ids.push(open);
      setImmediate(() => (open = undefined));
    }
    open.push(msg.id as string);
  });
  return groups;
}

const dir = mkdtempSync(join(tmpdir(), 'berth-batch-dispatch-'));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('dispatch to batch handlers', () => {
  it.each([
    ['memory', () => new MemoryStore()],
    ['SQLite file', () => new SqliteStore({ file: join(dir, `group-${++n}.sqlite`) })],
  ])(
    '%s store: hands a batch worker a batch of queued jobs in one write, not spread over workers',
    async (_, store) => {
      await using t = await listening({ store: store() });
      const submit = async (n: number) => {
        const ids: string[] = [];
        for (let i = 0; i < n; i++)
          ids.push((await call(t.server, 'POST', '/v2/echo/run', { body: { input: { i } } })).body.id as string);
        return ids;
      };
      const first = await submit(4);
      // Two batch workers with room for 8 each: the 4 queued jobs go to one of them, together.
      const a = await ScriptedWorker.connect(t.url, { workerId: 'a', concurrency: 4, batch: { maxSize: 4 } });
      const groupsA = assignGroups(a);
      await a.next('welcome');
      const b = await ScriptedWorker.connect(t.url, { workerId: 'b', concurrency: 4, batch: { maxSize: 4 } });
      const groupsB = assignGroups(b);
      await b.next('welcome');
      await until(() => groupsA.ids.flat().length === 4, 5000, 'assigns');
      expect(groupsA.ids.map((g) => [...g].sort())).toEqual([[...first].sort()]);
      // Both busy; a queue forms. When a's batch finishes, its next batch arrives whole.
      const second = await submit(4);
      await until(() => groupsB.ids.flat().length === 4, 5000, 'assigns to b');
      const queued = await submit(4);
      for (const id of first) a.send({ type: 'job.complete', id, attempt: 1, output: null });
      await until(() => groupsA.ids.flat().length === 8, 5000, 'second batch for a');
      expect(groupsA.ids.slice(1).map((g) => [...g].sort())).toEqual([[...queued].sort()]);
      expect(groupsB.ids.flat().sort()).toEqual([...second].sort());
      await a.close();
      await b.close();
    },
  );

  it('counts the batches workers report: /health batch stats and the berth_batch_size histogram', async () => {
    await using t = await listening();
    const before = await call(t.server, 'GET', '/v2/echo/health');
    expect(before.body.batch).toBeUndefined(); // no batch handler seen: the RunPod-shaped reply only
    const w = await ScriptedWorker.connect(t.url, { concurrency: 8, batch: { maxSize: 8 } });
    await w.next('welcome');
    expect((await call(t.server, 'GET', '/v2/echo/health')).body.batch).toEqual({
      maxSize: 8,
      batches: 0,
      jobs: 0,
      meanSize: 0,
    });
    for (const size of [1, 3, 8]) w.send({ type: 'batch', size });
    const health = await until(async () => {
      const b = (await call(t.server, 'GET', '/v2/echo/health')).body.batch as { batches: number } | undefined;
      return b && b.batches === 3 ? b : undefined;
    });
    expect(health).toEqual({ maxSize: 8, batches: 3, jobs: 12, meanSize: 4 });
    const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const text = await res.text();
    expect(text).toContain('# TYPE berth_batch_size histogram');
    expect(text).toContain('berth_batch_size_bucket{endpoint="echo",le="1"} 1');
    expect(text).toContain('berth_batch_size_bucket{endpoint="echo",le="4"} 2');
    expect(text).toContain('berth_batch_size_bucket{endpoint="echo",le="8"} 3');
    expect(text).toContain('berth_batch_size_sum{endpoint="echo"} 12');
    expect(text).toContain('berth_batch_size_count{endpoint="echo"} 3');
    await w.close();
    // Disconnected: the counts stay, the announced size goes.
    await until(async () => (await call(t.server, 'GET', '/v2/echo/health')).body.batch?.maxSize === 0);
  });
});
