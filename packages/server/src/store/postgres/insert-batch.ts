import type { Pool } from 'pg';
import type { JobRecord } from '../types.js';
import { DuplicateJobError } from '../../errors.js';
import { isConnectionError, toUnavailable } from './connect.js';
import { Coalescer } from './coalesce.js';
import { bigInput, insertValues } from './rows.js';
import { INSERT_MANY_SQL, named, SQL } from './statements.js';
import { INSERT_MANY_NOTIFY_SQL } from './notify-sql.js';
import {
  claimedAtInsert,
  INSERT_CLAIM_NOTIFY_SQL,
  INSERT_CLAIM_SQL,
  INSERT_ONE_CLAIM_SQL,
  type ClaimAsk,
} from './insert-claim.js';

type Outcome = Error | 'notified' | 'claimed' | undefined;
interface Slot {
  job: JobRecord;
  /** Taken by the statement being built: no claim can ride with it any more. */
  sent: boolean;
  claim?: ClaimAsk;
}

/** Statements of queued inserts running at once per pool; more inserts wait and join the next one. */
const INSERTS_IN_FLIGHT = 2;
/** A batch queuing on more endpoints than this tells the others through the bus (a payload's 8000 bytes). */
const MAX_NOTIFIED_ENDPOINTS = 20;

/**
 * Queued jobs from concurrent `/run` and `/runsync` requests, inserted by one multi-row statement per batch
 * (`INSERT_MANY_SQL`: unnest of one array per column, `nextval('queue_seq')` in submission order, so FIFO holds).
 * A caller is answered only after the statement holding its job committed. A duplicate id (an idempotent retry)
 * is skipped by `ON CONFLICT DO NOTHING` and that caller gets `DuplicateJobError`, as with a one-row insert; if
 * the statement fails for another reason, each job is inserted alone so one bad row fails only its own request.
 */
export class InsertBatcher {
  private readonly batch: Coalescer<Slot, Outcome>;
  /** Jobs added and not yet sent, in order: a claim of the same turn may ride with one (`attachClaim`). */
  private unsent: Slot[] = [];

  constructor(
    private readonly pool: Pool,
    /** Where the statement announces the queued jobs itself (`PgJobPath.eventNotice`): undefined while alone. */
    private readonly notice: () => { channel: string; header: string } | undefined,
    /** This replica's id (the `owner` of a job claimed by its insert). */
    private readonly replicaId: string,
  ) {
    this.batch = new Coalescer((slots) => this.send(slots), INSERTS_IN_FLIGHT);
  }

  /**
   * Resolves once committed: `notified` when the statement also told the other replicas (`queued` message),
   * `claimed` when a claim rode with it and took the job (it is running, not queued).
   */
  async insert(job: JobRecord): Promise<'notified' | 'claimed' | undefined> {
    const slot: Slot = { job, sent: false };
    this.unsent.push(slot);
    let r: Outcome;
    if (bigInput(job)) {
      // A big input goes in a statement of its own: in a batch, every row's text is escaped into arrays and copied
      // into one bind message on the event loop (ten 19 MiB inputs at once stalled it for seconds). It goes at the
      // end of this turn, so that a claim of the same turn can still ride with it (`attachClaim`): the job then
      // reaches the worker from memory, never read back.
      await new Promise((resolve) => setImmediate(resolve));
      [r] = await this.send([slot]);
    } else r = await this.batch.add(slot);
    if (r instanceof Error) throw r;
    return r;
  }

  /**
   * A claim issued in the same event-loop turn as the one insert waiting to go out, of `endpointId`, while no insert
   * statement is running (a lone client's pattern; under load, claims stay batched on their own) rides in it
   * (`insert-claim.ts`): the insert gives the new job to the worker unless an older job is queued on the endpoint.
   * Undefined when there is none to ride with: claim normally.
   */
  attachClaim(endpointId: string, workerId: string, now: number): Promise<JobRecord | undefined> | undefined {
    const slot = this.unsent[0];
    if (!this.batch.idle() || this.unsent.length !== 1 || !slot || slot.claim || slot.job.endpointId !== endpointId)
      return undefined;
    return new Promise((resolve, reject) => (slot.claim = { workerId, now, resolve, reject }));
  }

  /** Runs one statement for `slots`, then settles the claims that rode with it. */
  private async send(slots: Slot[]): Promise<Outcome[]> {
    for (const s of slots) s.sent = true;
    this.unsent = this.unsent.filter((s) => !s.sent);
    const asks = slots.map((s) => s.claim);
    let out: Outcome[];
    try {
      out = await this.insertMany(
        slots.map((s) => s.job),
        asks.some(Boolean) ? asks : undefined,
      );
    } catch (err) {
      for (const a of asks) a?.reject(err);
      throw err;
    }
    slots.forEach((s, i) => s.claim?.resolve(out[i] === 'claimed' ? claimedAtInsert(s.job, s.claim) : undefined));
    return out;
  }

  /** One result per job: stored (`undefined`, `notified` or `claimed`), or the error of that job. */
  private async insertMany(jobs: JobRecord[], asks: (ClaimAsk | undefined)[] | undefined): Promise<Outcome[]> {
    const n = this.notice();
    if (jobs.length === 1 && !n)
      return [await (asks ? this.insertOneClaimed(jobs[0]!, asks[0]!) : this.insertOne(jobs[0]!))];
    // Ids appearing twice in one batch (the same idempotency key, twice at once): the first one is sent.
    const first = new Map<string, number>();
    jobs.forEach((j, i) => first.has(j.id) || first.set(j.id, i));
    const sent = [...first.values()].map((i) => jobs[i]!);
    let stored: Map<string, boolean>;
    let told: 'notified' | undefined;
    try {
      const columns = Array.from({ length: 24 }, (): unknown[] => []);
      for (const j of sent) insertValues(j).forEach((v, c) => columns[c]!.push(v));
      const notifies = n !== undefined && new Set(sent.map((j) => j.endpointId)).size <= MAX_NOTIFIED_ENDPOINTS;
      const tail = notifies ? [n.channel, n.header] : [];
      const workers = asks && [...first.values()].map((i) => asks[i]?.workerId ?? null);
      const now = asks?.find(Boolean)?.now;
      const r = await this.pool.query<{ id: string; claimed?: boolean }>(
        workers
          ? named(notifies ? INSERT_CLAIM_NOTIFY_SQL : INSERT_CLAIM_SQL, [
              ...columns,
              workers,
              now,
              this.replicaId,
              ...tail,
            ])
          : named(notifies ? INSERT_MANY_NOTIFY_SQL : INSERT_MANY_SQL, [...columns, ...tail]),
      );
      stored = new Map(r.rows.map((x) => [x.id, x.claimed === true]));
      if (notifies) told = 'notified';
    } catch (err) {
      if (isConnectionError(err)) return toUnavailable(err);
      return Promise.all(jobs.map((j) => this.insertOne(j)));
    }
    return jobs.map((j, i) => {
      if (first.get(j.id) !== i || !stored.has(j.id)) return new DuplicateJobError(j.id);
      return stored.get(j.id) ? 'claimed' : told;
    });
  }

  /** One job with the claim that rides with it (`INSERT_ONE_CLAIM_SQL`). */
  private async insertOneClaimed(job: JobRecord, ask: ClaimAsk): Promise<Outcome> {
    try {
      const values = [...insertValues(job, true), ask.workerId, ask.now, this.replicaId];
      const r = await this.pool.query<{ claimed: boolean }>(named(INSERT_ONE_CLAIM_SQL, values));
      if (r.rows.length === 0) return new DuplicateJobError(job.id);
      return r.rows[0]!.claimed ? 'claimed' : undefined;
    } catch (err) {
      if (isConnectionError(err)) return toUnavailable(err);
      return this.insertOne(job);
    }
  }

  private async insertOne(job: JobRecord): Promise<Error | undefined> {
    try {
      await this.pool.query(named(SQL.insertQueued, insertValues(job, true)));
      return undefined;
    } catch (err) {
      if ((err as { code?: string }).code === '23505') return new DuplicateJobError(job.id, { cause: err });
      if (isConnectionError(err)) return toUnavailable(err); // fails the batch: every job in it is unavailable
      return err as Error;
    }
  }
}
