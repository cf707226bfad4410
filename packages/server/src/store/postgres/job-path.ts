import type { Pool } from 'pg';
import type { JobStatus } from '@berth/protocol';
import type { ClaimLane, JobRecord } from '../types.js';
import { toRecord, type JobRow } from './rows.js';
import { ClaimBatcher } from './claim-batch.js';
import { FinishBatcher } from './finish-batch.js';
import { InsertBatcher } from './insert-batch.js';
import { NoticeLedger } from './notices.js';
import type { Run } from './pg-pools.js';
import { CLAIM_MANY_SQL, LANE_CLAIM_SQL } from './statements.js';

const EMPTY_HINT_MS = 1_000;

/** Where a statement sends the cluster messages of its changes itself: channel and payload header. */
export type EventNotice = { channel: string; header: string };

/**
 * The per-job statements of the PostgreSQL store, each batched across concurrent requests (`Coalescer`): queued
 * inserts, claims and the finishes of jobs without a webhook. While other replicas listen, the /runsync inserts
 * also send their `queued` messages (`notify-sql.ts`); claims send none (`unannounced`). Both are noted in
 * `noticed` so the bus does not send them: no NOTIFY round trip of their own.
 */
export class PgJobPath {
  /** Set by the cluster bus: `undefined` while no other replica listens. */
  eventNotice: (() => EventNotice | undefined) | undefined;
  /** Changes whose cluster message rode in their own statement or is not sent (stream appends note theirs here too). */
  readonly noticed = new NoticeLedger();
  /**
   * Endpoints whose queue a claim just found empty, until when (epoch ms): a worker with free credits asks for
   * work after every result, and an empty queue should not cost a query each time. Cleared by anything that
   * queues a job here or on another replica (`queuedElsewhere`); it expires after `EMPTY_HINT_MS` anyway, so a
   * lost notification delays a job by at most that.
   */
  private readonly emptyUntil = new Map<string, number>();
  private queueGen = 0;
  /** Queued inserts of `/run` (synchronous commit) and of `/runsync` (the asynchronous pool: see `PgStore.insert`). */
  private readonly inserts: InsertBatcher;
  private readonly syncInserts: InsertBatcher;
  private readonly finishes: FinishBatcher;
  private readonly claims: ClaimBatcher;

  constructor(
    run: Run,
    private readonly asyncRun: Run,
    pool: Pool,
    asyncPool: Pool,
    private readonly replicaId: string,
  ) {
    // Only statements on the asynchronously committing pool carry notifications: PostgreSQL serialises the commits
    // of notifying transactions (a database-wide lock held through the commit), so a NOTIFY inside a synchronous
    // commit would make every other notifying commit wait for its WAL flush. (Measured: with the finishes and the
    // /run inserts notifying too, three replicas did fewer /run completions and /status reads than `main`.) Those
    // go through the bus: a notify-only transaction writes no WAL and waits for no flush.
    this.inserts = new InsertBatcher(pool, () => undefined, replicaId);
    this.syncInserts = new InsertBatcher(asyncPool, () => this.eventNotice?.(), replicaId);
    this.finishes = new FinishBatcher(
      (sql, params) => run(sql, params),
      replicaId,
      (rows) => this.unannounced(rows),
      (endpointId, workerId, now) => this.claims.claim(endpointId, workerId, now),
    );
    this.claims = new ClaimBatcher(
      async (params) =>
        this.unannounced(await asyncRun<JobRow & { rn: number; more: boolean }>(CLAIM_MANY_SQL, params)),
      () => replicaId,
      (endpointId, gen) => {
        if (gen === this.queueGen) this.emptyUntil.set(endpointId, Date.now() + EMPTY_HINT_MS);
      },
      () => this.queueGen,
    );
  }

  /**
   * Stores a queued job: `notified` when its statement also told the other replicas (`queued` message), `claimed`
   * when a claim of the same turn rode with it and took it (see `insert-claim.ts`).
   */
  insertQueued(job: JobRecord): Promise<'notified' | 'claimed' | undefined> {
    return (job.sync ? this.syncInserts : this.inserts).insert(job);
  }

  /**
   * A claim of the same turn as a submit on the endpoint rides in that submit's insert (one round trip for both,
   * whatever the empty-queue hint says: the job is being inserted); one of the same turn as results (the credits
   * they free) rides in their finish statement (`finish-claim.ts`) unless the hint says the queue is empty; any
   * other claim is batched (`ClaimBatcher`).
   */
  claim(endpointId: string, workerId: string, now: number, lane?: ClaimLane): Promise<JobRecord | undefined> {
    if (lane !== undefined) return this.laneClaim(endpointId, workerId, now, lane);
    const riding =
      this.syncInserts.attachClaim(endpointId, workerId, now) ?? this.inserts.attachClaim(endpointId, workerId, now);
    if (riding) return riding.then((job) => job && this.unannounced([job])[0]);
    if ((this.emptyUntil.get(endpointId) ?? 0) > Date.now()) return Promise.resolve(undefined);
    const gen = this.queueGen; // before the statement: a job queued while it runs must not be hidden by the hint
    const withFinish = this.finishes.attachClaim(endpointId, workerId, now);
    if (!withFinish) return this.claims.claim(endpointId, workerId, now);
    return withFinish.then(({ job, drained }) => {
      if (drained && gen === this.queueGen) this.emptyUntil.set(endpointId, Date.now() + EMPTY_HINT_MS);
      return job;
    });
  }

  /** A claim of one lane: its own statement (it rides with no insert or finish, and sets no empty hint). */
  private async laneClaim(
    endpointId: string,
    workerId: string,
    now: number,
    lane: ClaimLane,
  ): Promise<JobRecord | undefined> {
    if ((this.emptyUntil.get(endpointId) ?? 0) > Date.now()) return undefined;
    const rows = await this.asyncRun<JobRow>(LANE_CLAIM_SQL[lane], [endpointId, 1, [workerId], now, this.replicaId]);
    const row = this.unannounced(rows)[0];
    return row && toRecord(row);
  }

  /** `pgTransitions.finishParams`: the finished row, or undefined (stale, or the job has a webhook). */
  finish(params: unknown[]): Promise<JobRow | undefined> {
    return this.finishes.add(params);
  }

  /** Jobs were queued on `endpointId` (here or by another replica; all: `undefined`): the next claim queries. */
  queuedElsewhere(endpointId?: string): void {
    this.queueGen++;
    if (endpointId === undefined) this.emptyUntil.clear();
    else this.emptyUntil.delete(endpointId);
  }

  /** Whether the change event of the job in `status` is not for the bus (a claim's: `unannounced`; true once). */
  takeNoticed(id: string, attempt: number, status: JobStatus): boolean {
    return this.noticed.take(`${id}\t${attempt}\t${status}`);
  }

  /**
   * Claimed jobs' change events (now running) stay on this replica: every waiter, here or elsewhere, waits for
   * chunks or the end (/runsync, /status-sync, /stream, SSE), so on another replica the running record only woke
   * it to wait again, after PostgreSQL had woken every listening replica to deliver it. Marked as sent so the bus
   * skips them; the terminal event still goes out.
   */
  private unannounced<R extends { id: string; attempt: number }>(rows: R[]): R[] {
    if (rows.length && this.eventNotice?.())
      for (const r of rows) this.noticed.add(`${r.id}\t${r.attempt}\tIN_PROGRESS`);
    return rows;
  }
}
