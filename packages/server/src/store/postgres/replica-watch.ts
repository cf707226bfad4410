import type { Pool } from 'pg';
import { named } from './statements.js';

/** $1 this replica, $2 now, $3 lease until, $4 seen-since of a live replica, $5 seen-since of a kept row. */
const BEAT_SQL = `
  WITH me AS (
    INSERT INTO replicas (id, seen_at) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET seen_at = EXCLUDED.seen_at RETURNING 1
  ), leased AS (
    UPDATE jobs SET lease_until = $3 WHERE status = 'IN_PROGRESS' AND lease_until IS NULL AND owner IS NOT NULL AND owner <> $1
      AND owner NOT IN (SELECT id FROM replicas WHERE seen_at >= $4)
    RETURNING 1
  ), gone AS (
    DELETE FROM replicas WHERE seen_at < $5 AND id <> $1 RETURNING 1
  )
  SELECT (SELECT count(*) FROM leased)::int AS leased,
    (SELECT count(*) FROM replicas WHERE seen_at >= $4 AND id <> $1)::int AS others`;

/** How often a replica says it is alive, and after how long without a word it counts as dead. */
export interface ReplicaTimes {
  heartbeatMs: number;
  deadAfterMs: number;
}

export const DEFAULT_REPLICA_TIMES: ReplicaTimes = { heartbeatMs: 2_000, deadAfterMs: 10_000 };

/**
 * Replica liveness for the PostgreSQL store. Each replica upserts its row in `replicas` every `heartbeatMs`;
 * a running job records the replica its worker is connected to (`jobs.owner`, set by claim and by a worker's
 * reconnect). A replica that dies (kill -9, lost host) never sets the disconnected-worker lease its sockets
 * would have set, so every replica, on each heartbeat, does it for replicas silent for `deadAfterMs`: their
 * running jobs get a lease of the worker grace period; workers that reconnect to another replica within it
 * keep their jobs, the rest are requeued by the lease sweep. Every step is a conditional write, safe to run on
 * all replicas at once.
 */
export class ReplicaWatch {
  private timer: NodeJS.Timeout | undefined;
  private graceMs = 10_000;
  /** Other replicas alive at the last heartbeat. */
  liveOthers = 0;

  constructor(
    private readonly pool: Pool,
    readonly replicaId: string,
    private readonly times: ReplicaTimes,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Registers this replica and starts the heartbeat; `graceMs`: lease given to the jobs of dead replicas. */
  async start(graceMs: number): Promise<void> {
    this.graceMs = Math.max(0, graceMs);
    await this.beat();
    if (this.timer) return;
    this.timer = setInterval(() => void this.beat().catch(this.onError), this.times.heartbeatMs);
    this.timer.unref();
  }

  /**
   * One heartbeat, one statement: says this replica is alive, leases the running jobs of silent replicas, forgets
   * replicas silent for 10 × `deadAfterMs`, and counts the live others. Its parts share one snapshot: the lease
   * and the count see the replicas as they were before this upsert, which changes neither (both leave this
   * replica out), and the cleanup never touches this replica's own row (a row is written once per statement).
   */
  async beat(now = Date.now()): Promise<number> {
    const r = await this.pool.query<{ leased: number; others: number }>(
      named(BEAT_SQL, [
        this.replicaId,
        now,
        now + this.graceMs,
        now - this.times.deadAfterMs,
        now - 10 * this.times.deadAfterMs,
      ]),
    );
    this.liveOthers = r.rows[0]?.others ?? 0;
    return r.rows[0]?.leased ?? 0;
  }

  /** Stops the heartbeat; `leave`: removes this replica's row so others treat its jobs as orphaned at once. */
  async stop(leave: boolean): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (leave) await this.pool.query(`DELETE FROM replicas WHERE id = $1`, [this.replicaId]).catch(this.onError);
  }

  get running(): boolean {
    return this.timer !== undefined;
  }
}
