import type { Pool } from 'pg';
import type { JobRecord } from '../types.js';
import { DuplicateJobError } from '../../errors.js';
import { isConnectionError, toUnavailable } from './connect.js';
import { Coalescer } from './coalesce.js';
import { insertValues } from './rows.js';
import { INSERT_MANY_SQL, named, SQL } from './statements.js';
import { INSERT_MANY_NOTIFY_SQL } from './notify-sql.js';

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
  private readonly batch: Coalescer<JobRecord, Error | 'notified' | undefined>;

  constructor(
    private readonly pool: Pool,
    /** Where the statement announces the queued jobs itself (`PgJobPath.eventNotice`): undefined while alone. */
    private readonly notice: () => { channel: string; header: string } | undefined,
  ) {
    this.batch = new Coalescer((jobs) => this.insertMany(jobs), INSERTS_IN_FLIGHT);
  }

  /** Resolves once committed: true when the statement also told the other replicas (`queued` message). */
  async insert(job: JobRecord): Promise<boolean> {
    const r = await this.batch.add(job);
    if (r instanceof Error) throw r;
    return r === 'notified';
  }

  /** One result per job: stored (`undefined`, or `notified`), or the error of that job. */
  private async insertMany(jobs: JobRecord[]): Promise<(Error | 'notified' | undefined)[]> {
    const n = this.notice();
    if (jobs.length === 1 && !n) return [await this.insertOne(jobs[0]!)];
    // Ids appearing twice in one batch (the same idempotency key, twice at once): the first one is sent.
    const first = new Map<string, number>();
    jobs.forEach((j, i) => first.has(j.id) || first.set(j.id, i));
    const sent = [...first.values()].map((i) => jobs[i]!);
    let stored: Set<string>;
    let told: 'notified' | undefined;
    try {
      const columns = Array.from({ length: 24 }, (): unknown[] => []);
      for (const j of sent) insertValues(j).forEach((v, c) => columns[c]!.push(v));
      const endpoints = new Set(sent.map((j) => j.endpointId)).size;
      const r =
        n && endpoints <= MAX_NOTIFIED_ENDPOINTS
          ? await this.pool.query<{ id: string }>(named(INSERT_MANY_NOTIFY_SQL, [...columns, n.channel, n.header]))
          : await this.pool.query<{ id: string }>(named(INSERT_MANY_SQL, columns));
      stored = new Set(r.rows.map((x) => x.id));
      if (n && endpoints <= MAX_NOTIFIED_ENDPOINTS) told = 'notified';
    } catch (err) {
      if (isConnectionError(err)) return toUnavailable(err);
      return Promise.all(jobs.map((j) => this.insertOne(j)));
    }
    return jobs.map((j, i) => (first.get(j.id) === i && stored.has(j.id) ? told : new DuplicateJobError(j.id)));
  }

  private async insertOne(job: JobRecord): Promise<Error | undefined> {
    try {
      await this.pool.query(named(SQL.insertQueued, insertValues(job)));
      return undefined;
    } catch (err) {
      if ((err as { code?: string }).code === '23505') return new DuplicateJobError(job.id);
      if (isConnectionError(err)) return toUnavailable(err); // fails the batch: every job in it is unavailable
      return err as Error;
    }
  }
}
