import type { DeleteCondition, DueJobs, JobRecord } from '../types.js';
import type { Run, Tx } from './pg-pools.js';
import { toRecord } from './rows.js';
import { named, SQL } from './statements.js';
import { pgJobLogs } from './job-logs.js';
import { pgOutbox } from './webhook-outbox.js';

/**
 * The PostgreSQL store's sweeps, counters, recovery and deletions (`PgStore` delegates here): work of the
 * periodic sweep and of the admin routes, off the per-job path.
 */
export const pgMaintenance = {
  /** Removes an endpoint's queued jobs (with their chunks, logs and deliveries); answers their ids. */
  purgeQueue(tx: Tx, endpointId: string): Promise<string[]> {
    return tx(async (c) => {
      const r = await c.query<{ id: string }>(named(SQL.purge, [endpointId]));
      const ids = r.rows.map((x) => x.id);
      if (ids.length) await c.query(named(SQL.dropChunksOf, [ids]));
      await pgJobLogs.jobsDeleted(c, ids);
      await pgOutbox.jobDeleted(c, ids);
      return ids;
    });
  },

  delete(tx: Tx, id: string, cond?: DeleteCondition): Promise<boolean> {
    return tx(async (c) => {
      const r = await c.query(named(SQL.deleteIf, [id, cond?.expiresAt ?? null, cond?.retainUntil ?? null]));
      if (!r.rowCount) return false;
      await c.query(named(SQL.dropChunks, [id]));
      await pgJobLogs.jobsDeleted(c, [id]);
      await pgOutbox.jobDeleted(c, [id]);
      return true;
    });
  },

  /** `Store.deleteRetained`: one DELETE for the jobs, then their chunks, logs and finished deliveries. */
  deleteRetained(tx: Tx, jobs: readonly { id: string; retainUntil: number }[]): Promise<string[]> {
    return tx(async (c) => {
      const r = await c.query<{ id: string }>(
        named(SQL.deleteRetained, [jobs.map((j) => j.id), jobs.map((j) => j.retainUntil)]),
      );
      const ids = r.rows.map((x) => x.id);
      if (!ids.length) return ids;
      await c.query(named(SQL.dropChunksOf, [ids]));
      await pgJobLogs.jobsDeleted(c, ids);
      await pgOutbox.jobDeleted(c, ids);
      return ids;
    });
  },

  async due(run: Run, now: number, limit: number): Promise<DueJobs> {
    const all = async (sql: string) => (await run(sql, [now, limit])).map(toRecord);
    const [expired, timedOut, retained, leaseExpired] = await Promise.all([
      all(SQL.due.expired),
      all(SQL.due.timedOut),
      run<{ id: string; retain_until: number }>(SQL.due.retained, [now, limit]).then((rs) =>
        rs.map((r) => ({ id: r.id, retainUntil: r.retain_until })),
      ),
      all(SQL.due.leaseExpired),
    ]);
    return { expired, timedOut, retained, leaseExpired };
  },

  async batchBacklog(run: Run, endpointId: string): Promise<number> {
    const [r] = await run<{ n: number }>(SQL.batchBacklog, [endpointId]);
    return Number(r?.n ?? 0);
  },

  async queueDepth(run: Run, endpointId: string): Promise<number> {
    const [r] = await run<{ n: number }>(SQL.queueDepth, [endpointId]);
    return r?.n ?? 0;
  },

  /**
   * On start, after this replica's first heartbeat: leases the running jobs no live replica owns (`replicaId`
   * itself included: its previous life), so their workers can reconnect to any replica within the grace period.
   */
  async recover(run: Run, leaseUntil: number, replicaId: string, liveSince: number) {
    await run(SQL.leaseOrphans, [leaseUntil, replicaId, liveSince]);
    const [n] = await run<{ queued: number; running: number }>(SQL.liveCounts);
    const eps = await run<{ endpoint_id: string }>(SQL.endpoints);
    return { queued: n?.queued ?? 0, running: n?.running ?? 0, endpoints: eps.map((r) => r.endpoint_id) };
  },

  /** Running jobs of a worker. */
  async runningOn(run: Run, workerId: string): Promise<JobRecord[]> {
    return (await run(SQL.runningOn, [workerId])).map(toRecord);
  },
};
