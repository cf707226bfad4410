import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { random } from '../store/conformance/fixtures.test-helpers.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/types.js';
import { call, listening, ScriptedWorker, until } from '../testing.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-durability-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

describe('commit before answer, commit before dispatch (SQLite)', () => {
  it('/run answers after the job is committed; job.assign is sent after the claim is committed', async () => {
    const file = join(dir, `order-${++n}.sqlite`);
    await using ctx = await listening({ store: new SqliteStore({ file }) });
    const reader = new BetterSqlite3(file, { readonly: true });
    const row = (id: string) =>
      reader.prepare('SELECT status, attempt FROM jobs WHERE id = ?').get(id) as
        | { status: string; attempt: number }
        | undefined;
    try {
      const res = await call(ctx.server, 'POST', '/v2/echo/run', { body: { input: { a: 1 } } });
      expect(res.status).toBe(200);
      expect(row(res.body.id)).toEqual({ status: 'IN_QUEUE', attempt: 0 }); // another connection sees it: committed

      const seenAtAssign: unknown[] = [];
      const worker = await ScriptedWorker.connect(ctx.url, { endpointId: 'echo', concurrency: 1 });
      worker.ws.on('message', (data) => {
        const m = JSON.parse(data.toString()) as { type: string; id?: string };
        if (m.type === 'job.assign' && m.id) seenAtAssign.push(row(m.id)); // read the moment the message arrives
      });
      await worker.next('job.assign');
      await until(() => seenAtAssign.length > 0);
      expect(seenAtAssign[0]).toEqual({ status: 'IN_PROGRESS', attempt: 1 });
      await worker.close();
    } finally {
      reader.close();
    }
  });
});

const stores: [string, () => Store][] = [
  ['memory', () => new MemoryStore()],
  ['SQLite', () => new SqliteStore({ file: join(dir, `race-${++n}.sqlite`) })],
];

describe.each(stores)('cancel, completion, executionTimeout, ttl and requeue race (%s)', (_name, makeStore) => {
  it('exactly one wins each round and every job object shows a state the spec allows', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    await using ctx = await listening({ store: makeStore(), clock, workerGraceMs: 0 });
    const ROUNDS = 60;
    const outcomes = new Map<string, number>();
    const rand = random(7);
    /** Starts `fn` after 0-3 ms (a timer or the next turn), so the racers interleave differently each round. */
    const later = (fn: () => Promise<unknown> | unknown) =>
      new Promise((r) => setTimeout(r, Math.floor(rand() * 4))).then(fn);
    for (let round = 0; round < ROUNDS; round++) {
      const worker = await ScriptedWorker.connect(ctx.url, {
        endpointId: 'echo',
        concurrency: 1,
        workerId: `w-${round}`,
      });
      const sub = await call(ctx.server, 'POST', '/v2/echo/run', {
        body: { input: { round }, policy: { executionTimeout: 5_000, ttl: 20_000 } },
      });
      const assign = await worker.next('job.assign');
      const id = String(sub.body.id);
      const kind = round % 4;
      // kind 0: no deadline due; 1 and 2: the executionTimeout is due; 3: the ttl is due.
      clock.advance([1_000, 6_000, 6_000, 30_000][kind]!);
      // Everything at once: the result, a cancel, a sweep and, in kind 2, the worker's loss (requeue).
      const racers: Promise<unknown>[] = [
        later(() => worker.send({ type: 'job.complete', id, attempt: assign.attempt, output: { ok: round } })),
        later(() => call(ctx.server, 'POST', `/v2/echo/cancel/${id}`)),
        later(() => ctx.server.sweep()),
      ];
      if (kind === 2) racers.push(later(() => worker.close()));
      await Promise.all(racers);
      await ctx.server.sweep();
      // A job requeued by the worker's loss is cancelled or times out in the queue's sweep; wait for the end.
      const job = await until(async () => {
        const r = await call(ctx.server, 'GET', `/v2/echo/status/${id}`);
        if (r.status === 404) return { status: 'DELETED' } as Record<string, unknown>;
        return ['IN_QUEUE', 'IN_PROGRESS'].includes(String(r.body.status)) ? undefined : r.body;
      });
      const status = String(job['status']);
      outcomes.set(status, (outcomes.get(status) ?? 0) + 1);
      expect(['COMPLETED', 'CANCELLED', 'TIMED_OUT', 'DELETED']).toContain(status);
      if (kind === 0) expect(['COMPLETED', 'CANCELLED']).toContain(status);
      if (status === 'COMPLETED') {
        expect(job['output']).toEqual({ ok: round });
        expect(job['error']).toBeUndefined();
      } else if (status !== 'DELETED') expect(job['output']).toBeUndefined();
      if (status === 'TIMED_OUT') expect(String(job['error'])).toContain('timed out');
      if (kind === 3) expect(status).toBe('DELETED'); // the ttl deletes whatever the state
      if (!worker.closed) await worker.close();
    }
    console.log(`race winners (${_name}): ${JSON.stringify(Object.fromEntries(outcomes))}`);
    const health = (await call(ctx.server, 'GET', '/v2/echo/health')).body;
    expect(health.jobs.inQueue).toBe(0);
    expect(health.jobs.inProgress).toBe(0);
    const total = [...outcomes.values()].reduce((a, b) => a + b, 0);
    expect(total).toBe(ROUNDS);
    // completed + failed count each terminal job once (cancelled ones in neither), deleted ones still counted
    expect(health.jobs.completed + health.jobs.failed).toBeLessThanOrEqual(ROUNDS);
  });
});
