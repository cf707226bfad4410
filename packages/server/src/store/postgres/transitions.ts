import type { Queryable as Q } from './pg-pools.js';
import type { FinishPatch, JobRecord, RetentionPolicy } from '../types.js';
import { DuplicateJobError } from '../../errors.js';
import { insertValues, jsonParam, toRecord, type JobRow } from './rows.js';
import { named, SQL } from './statements.js';
import { pgOutbox } from './webhook-outbox.js';

type Stat = 'completed' | 'failed' | 'retried';
const SHARDS = 16;
/** One of the endpoint's `endpoint_stats` rows, at random: concurrent commits do not queue on one row. */
export const statShard = (): number => Math.floor(Math.random() * SHARDS);

async function one(c: Q, sql: string, params: unknown[]): Promise<JobRecord | undefined> {
  const r = await c.query<JobRow>(named(sql, params));
  return r.rows[0] ? toRecord(r.rows[0]) : undefined;
}

/** Bumps an outcome counter of the endpoint, on a random shard (`statShard`). */
async function stat(c: Q, endpointId: string, column: Stat): Promise<void> {
  await c.query(named(SQL.stat[column], [endpointId, statShard()]));
}

/**
 * The PostgreSQL store's state changes that take a transaction (`PgStore` runs each in one): a terminal
 * transition with its counter and webhook delivery, cancel, retry and requeue. Every write is conditional
 * (status and attempt in its WHERE); each function answers `undefined` when the job was not in that state.
 */
export const pgTransitions = {
  /** The parameters of `SQL.finish` and of one item of `FINISH_MANY_SQL`. */
  finishParams(id: string, attempt: number, patch: FinishPatch, now: number, retention: RetentionPolicy): unknown[] {
    const output = patch.status === 'COMPLETED' ? jsonParam(patch.output) : null;
    const error = patch.status === 'COMPLETED' ? null : patch.error;
    return [id, attempt, patch.status, output, error, now, retention.sync, retention.async];
  },

  /** A running attempt ends (with its counter and, for a job with a webhook, its delivery). */
  async finish(
    c: Q,
    id: string,
    attempt: number,
    patch: FinishPatch,
    now: number,
    retention: RetentionPolicy,
  ): Promise<JobRecord | undefined> {
    const job = await one(c, SQL.finish, pgTransitions.finishParams(id, attempt, patch, now, retention));
    if (!job) return undefined;
    await stat(c, job.endpointId, job.status === 'COMPLETED' ? 'completed' : 'failed');
    await pgOutbox.added(c, job, now);
    return job;
  },

  /** A job stored already terminal (an import): its row, its counter and its delivery. */
  async insertTerminal(c: Q, job: JobRecord): Promise<void> {
    try {
      await c.query(named(SQL.insertOther, insertValues(job, true)));
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new DuplicateJobError(job.id, { cause: err });
      throw err;
    }
    if (job.status === 'COMPLETED') await stat(c, job.endpointId, 'completed');
    if (job.status === 'FAILED' || job.status === 'TIMED_OUT') await stat(c, job.endpointId, 'failed');
    await pgOutbox.added(c, job, job.finishedAt ?? job.createdAt);
  },

  async cancel(
    c: Q,
    id: string,
    now: number,
    retention: RetentionPolicy,
  ): Promise<{ before: JobRecord; after: JobRecord } | undefined> {
    const before = await one(c, SQL.cancelLock, [id]);
    if (!before) return undefined;
    const after = await one(c, SQL.cancel, [id, now, retention.sync, retention.async]);
    if (!after) return undefined;
    await pgOutbox.added(c, after, now);
    return { before, after };
  },

  /** FAILED or TIMED_OUT back to the queue (`retry`), or a running attempt back to it (`requeue`). */
  async requeue(c: Q, how: 'retry' | 'requeue', params: unknown[]): Promise<JobRecord | undefined> {
    const job = await one(c, SQL[how], params);
    if (!job) return undefined;
    await c.query(named(SQL.dropChunks, [job.id]));
    await stat(c, job.endpointId, 'retried');
    return job;
  },
};
