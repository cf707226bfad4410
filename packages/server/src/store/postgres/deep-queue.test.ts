import { afterEach, describe, expect, it } from 'vitest';
import { COMPLETE, makeJob, RETENTION, T0 } from '../conformance/fixtures.test-helpers.js';
import { loadPg } from './connect.js';
import { LiveCounts } from './live-counts.js';
import { openTestPgStore, PG_TEST_URL, pgUnavailable, testSchema } from './pg-test-db.test-helpers.js';
import { INSERT_CLAIM_SQL } from './insert-claim.js';
import { insertValues } from './rows.js';
import { CLAIM_MANY_SQL, INSERT_TYPES, SQL } from './statements.js';

// A deep queue on PostgreSQL: claims read it in queue order through jobs_queue whatever the table's statistics say,
// and counting it for /health is bounded.
const skip = await pgUnavailable();

describe.skipIf(skip !== undefined)(`PgStore deep queue${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  it('a claim, and an insert that may claim, read the queue through jobs_queue, with no sort of the queued jobs, while the statistics are stale', {
    timeout: 60_000,
  }, async () => {
    const schema = testSchema();
    const s = await openTestPgStore({ schema });
    cleanup.push(() => s.close());
    // Filled faster than autovacuum analyses the table: the planner still believes it is empty.
    const N = 100_000; // at 50,000 the old schema's plan was still right; at 100,000 it sorted the queue
    for (let i = 0; i < N; i += 500)
      await Promise.all(
        Array.from({ length: 500 }, (_, k) => s.insert(makeJob({ endpointId: 'deep', createdAt: T0 + i + k }))),
      );
    const { Client } = loadPg();
    const c = new Client({ connectionString: PG_TEST_URL });
    await c.connect();
    cleanup.push(() => c.end());
    await c.query(`SET search_path = "${schema}"`);
    await c.query('BEGIN');
    await c.query(`PREPARE claim(text, int, text[], bigint, text) AS ${CLAIM_MANY_SQL}`);
    const r = await c.query(
      `EXPLAIN (ANALYZE, COSTS OFF) EXECUTE claim('deep', 64, array_fill('w'::text, array[64]), ${T0}, 'r')`,
    );
    await c.query('ROLLBACK');
    const plan = r.rows.map((x: Record<string, string>) => x['QUERY PLAN']).join('\n');
    expect(plan).toMatch(/Index Scan using jobs_queue on jobs/);
    expect(plan).not.toMatch(/Sort Key: jobs\.queue_seq/); // the old plan sorted all 100,000 queued jobs per claim
    expect(plan).toMatch(/Update on jobs[\s\S]*rows=64/);

    // An insert whose claim rides with it (/runsync at c=50) on another endpoint asks whether that endpoint has a
    // job queued: one probe of jobs_queue at that endpoint. The old statement's EXISTS became a merge semi join that
    // read and sorted every queued job of every endpoint (40-95 ms per insert at 1,000,000 queued, issue #40).
    // PostgreSQL plans a statement prepared by the driver generically after five runs, not knowing how many jobs
    // the batch's arrays hold: forced here. enable_nestloop = off stands in for the estimates that made a join look
    // cheaper than one probe per endpoint (a never-analysed table whose jobs_queue index the planner took for empty):
    // the statement must leave the planner nothing but the probe.
    const job = makeJob({ endpointId: 'other', createdAt: T0 });
    const types = [...INSERT_TYPES.map((t) => `${t}[]`), 'text[]', 'bigint', 'text'];
    await c.query('BEGIN');
    await c.query('SET LOCAL plan_cache_mode = force_generic_plan');
    await c.query('SET LOCAL enable_nestloop = off');
    await c.query(`PREPARE ins(${types.join(', ')}) AS ${INSERT_CLAIM_SQL}`);
    const lit = (v: unknown) =>
      v === null || v === undefined ? 'NULL' : typeof v === 'string' ? c.escapeLiteral(v) : String(v);
    const values = [...insertValues(job).map((v) => [v]), ['w'], T0, 'r'];
    const args = values.map((v, i) => `${Array.isArray(v) ? `ARRAY[${lit(v[0])}]` : lit(v)}::${types[i]}`);
    const ins = await c.query(`EXPLAIN (ANALYZE, COSTS OFF) EXECUTE ins(${args.join(', ')})`);
    await c.query('ROLLBACK');
    await c.query('DEALLOCATE ins');
    const insPlan = ins.rows.map((x: Record<string, string>) => x['QUERY PLAN']).join('\n');
    expect(insPlan).toMatch(
      /Limit[^\n]*\n\s*-> {2}Index (Only )?Scan using jobs_queue on jobs q[^\n]*\n\s*Index Cond: \(\(endpoint_id = /,
    );
    expect(insPlan).not.toMatch(/Sort Key: q\.endpoint_id/);
    expect(insPlan).not.toMatch(/rows=100000/);

    // And the queue drains in FIFO order through the store.
    const first = await Promise.all(Array.from({ length: 3 }, () => s.claim('deep', 'w1', T0 + 1)));
    expect(first.map((j) => j?.createdAt)).toEqual([T0, T0 + 1, T0 + 2]);
    for (const j of first) await s.finish(j!.id, j!.attempt, COMPLETE, T0 + 2, RETENTION);
    expect(await s.counts('deep')).toMatchObject({ inQueue: N - 3, inProgress: 0, completed: 3 });
  });
});

describe('LiveCounts', () => {
  /** A fake statement runner on a fake clock: each statement "takes" `cost(sql)` ms. */
  function fake(cost: (sql: string) => number, row: { in_queue: number; in_progress: number }) {
    let clock = 0;
    const seen: string[] = [];
    let completed = 0;
    const run = async <R extends object>(sql: string): Promise<R[]> => {
      seen.push(sql === SQL.counts ? 'counts' : sql === SQL.countsDone ? 'done' : sql);
      await new Promise((r) => setImmediate(r));
      clock += cost(sql);
      completed++;
      return [{ completed, failed: 0, retried: 0, ...row }] as unknown as R[];
    };
    return { run, seen, now: () => clock, advance: (ms: number) => (clock += ms), row };
  }

  it('a count of 10,000 jobs or more is reused for up to 10 x its time; the done counters are read every time', async () => {
    const f = fake((sql) => (sql === SQL.counts ? 20 : 0.5), { in_queue: 100_000, in_progress: 64 });
    const lc = new LiveCounts(f.run, f.now);
    expect(await lc.counts('e')).toMatchObject({ inQueue: 100_000, inProgress: 64, completed: 1 });
    f.row.in_queue = 99_000;
    f.advance(150); // 170 ms after the count began: inside its 200 ms
    expect(await lc.counts('e')).toMatchObject({ inQueue: 100_000, completed: 2 });
    f.advance(100); // past it
    expect(await lc.counts('e')).toMatchObject({ inQueue: 99_000, completed: 3 });
    expect(f.seen).toEqual(['counts', 'done', 'counts']);
  });

  it('a count under 10,000 jobs is never reused, however slow; concurrent calls share one statement', async () => {
    const f = fake(() => 50, { in_queue: 9_000, in_progress: 999 });
    const lc = new LiveCounts(f.run, f.now);
    const [a, b] = await Promise.all([lc.counts('e'), lc.counts('e')]);
    expect(a).toEqual(b);
    f.row.in_queue = 2;
    expect(await lc.counts('e')).toMatchObject({ inQueue: 2 });
    expect(f.seen).toEqual(['counts', 'counts']);
  });
});
