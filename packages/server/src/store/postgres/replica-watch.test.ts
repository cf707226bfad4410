import { describe, expect, it } from 'vitest';
import { makeJob, must, T0 } from '../conformance/fixtures.test-helpers.js';
import { PgStore } from './pg-store.js';
import { dropSchema, PG_TEST_URL, pgUnavailable, testSchema } from './pg-test-db.test-helpers.js';

// Two PgStore instances on one schema stand for two replicas; time is passed to `beat` explicitly.
const skip = await pgUnavailable();
const TIMES = { heartbeatMs: 60_000, deadAfterMs: 10_000 };

describe.skipIf(skip !== undefined)(`replica liveness on PostgreSQL${skip ? ` (skipped: ${skip})` : ''}`, () => {
  async function pair() {
    const schema = testSchema();
    const a = await PgStore.open({
      url: PG_TEST_URL,
      schema,
      replicaId: 'replica-a',
      replicaTimes: TIMES,
      poolSize: 2,
    });
    const b = await PgStore.open({
      url: PG_TEST_URL,
      schema,
      replicaId: 'replica-b',
      replicaTimes: TIMES,
      poolSize: 2,
    });
    return {
      a,
      b,
      done: async () => {
        await a.close();
        await b.close();
        await dropSchema(schema);
      },
    };
  }
  const beat = (s: PgStore, now: number) =>
    (s as unknown as { watch: { beat(now: number): Promise<number> } }).watch.beat(now);

  it('the running jobs of a replica that stopped beating get the grace lease; a live one keeps its jobs; a reconnect moves a job over', async () => {
    const { a, b, done } = await pair();
    try {
      const now = Date.now();
      await a.recover(now + 5_000); // registers A (grace 5 s)
      await b.recover(now + 5_000);
      await a.insert(makeJob({ id: 'on-a' }));
      await a.insert(makeJob({ id: 'moves' }));
      await b.insert(makeJob({ id: 'on-b' }));
      must(await a.claim('ep', 'wa', T0));
      const moving = must(await a.claim('ep', 'wa2', T0));
      must(await b.claim('ep', 'wb', T0));
      expect(await beat(b, now + 1_000)).toBe(0); // A is alive: nothing to take over
      expect(b.otherReplicas).toBe(1);
      // A's worker wa2 reconnects to B before A is declared dead: B owns that job now.
      expect(await b.setLease(moving.id, moving.attempt, null)).toBe(true);
      // A falls silent (kill -9): past deadAfterMs, B's heartbeat leases A's running job for the grace period.
      const later = now + 11_000;
      expect(await beat(b, later)).toBe(1);
      const lease = must((await b.get('on-a'))?.leaseUntil);
      expect(lease).toBeGreaterThan(later + 4_500); // the grace period B was started with (5 s, less the ms recover took)
      expect(lease).toBeLessThanOrEqual(later + 5_000);
      expect((await b.get('moves'))?.leaseUntil).toBeUndefined();
      expect((await b.get('on-b'))?.leaseUntil).toBeUndefined();
      expect(b.otherReplicas).toBe(0);
      expect(await beat(b, later + 1)).toBe(0); // once
      const due = await b.due(later + 5_000, 10);
      expect(due.leaseExpired.map((j) => j.id)).toEqual(['on-a']);
    } finally {
      await done();
    }
  });

  it('a starting replica leases only the running jobs no live replica owns', async () => {
    const { a, b, done } = await pair();
    try {
      const now = Date.now();
      await a.recover(now + 5_000);
      await a.insert(makeJob({ id: 'live' }));
      must(await a.claim('ep', 'wa', T0));
      const report = await b.recover(now + 5_000);
      expect(report).toMatchObject({ running: 1 });
      expect((await b.get('live'))?.leaseUntil).toBeUndefined(); // A is alive and holds it
    } finally {
      await done();
    }
  });
});
