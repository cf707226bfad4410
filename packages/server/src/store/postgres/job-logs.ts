import type { Queryable } from './pg-pools.js';
import { JOB_LOG_MAX_LINES, type JobListQuery, type JobLog, type JobLogLine, type JobRecord } from '../types.js';
import { toRecord, type JobRow } from './rows.js';
import { READ_COLS } from './statements.js';
import { toLogLine, type LogRow } from '../job-row.js';

/**
 * Per-job logs (table `job_logs`, counters `jobs.log_len` / `jobs.log_dropped`) and the recent-jobs listing on
 * PostgreSQL. `append` runs in the caller's transaction and locks the job row, so replicas appending to the
 * same job keep one order.
 */
export const pgJobLogs = {
  async append(c: Queryable, id: string, lines: JobLogLine[]): Promise<number> {
    const r = await c.query<{ log_len: number }>(`SELECT log_len FROM jobs WHERE id = $1 FOR UPDATE`, [id]);
    const len = r.rows[0]?.log_len;
    if (len === undefined) return 0;
    const kept = lines.slice(0, Math.max(0, JOB_LOG_MAX_LINES - len));
    if (kept.length) {
      await c.query(
        `INSERT INTO job_logs (job_id, seq, at, level, message, worker_id, attempt, fields)
         SELECT $1, $2 + i - 1, at, level, message, worker_id, attempt, fields
         FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[]) WITH ORDINALITY AS t(at, level, message, worker_id, attempt, fields, i)
         ON CONFLICT DO NOTHING`,
        [
          id,
          len,
          kept.map((l) => l.at),
          kept.map((l) => l.level),
          kept.map((l) => l.message),
          kept.map((l) => l.workerId),
          kept.map((l) => l.attempt),
          kept.map((l) => (l.fields === undefined ? null : JSON.stringify(l.fields))),
        ],
      );
    }
    await c.query(`UPDATE jobs SET log_len = log_len + $2, log_dropped = log_dropped + $3 WHERE id = $1`, [
      id,
      kept.length,
      lines.length - kept.length,
    ]);
    return kept.length;
  },

  async get(c: Queryable, id: string): Promise<JobLog | undefined> {
    const r = await c.query<{ log_dropped: number }>(`SELECT log_dropped FROM jobs WHERE id = $1`, [id]);
    const state = r.rows[0];
    if (!state) return undefined;
    const rows = await c.query<LogRow>(
      `SELECT at, level, message, worker_id, attempt, fields FROM job_logs WHERE job_id = $1 ORDER BY seq`,
      [id],
    );
    return { lines: rows.rows.map(toLogLine), dropped: state.log_dropped };
  },

  /** With the job's row (delete, purge). */
  async jobsDeleted(c: Queryable, ids: string[]): Promise<void> {
    if (ids.length) await c.query(`DELETE FROM job_logs WHERE job_id = ANY($1)`, [ids]);
  },

  /**
   * `Store.listJobs`: after a (created_at, id) key (ids compared bytewise, as `recent` orders them), as one range of
   * the `jobs_recent` index (no key: a key past every job).
   */
  async page(c: Queryable, endpointId: string, q: JobListQuery): Promise<JobRecord[]> {
    const r = await c.query<JobRow>(
      `SELECT ${READ_COLS} FROM jobs WHERE endpoint_id = $1
       AND (created_at, id COLLATE "C") < ($2::bigint, $3::text COLLATE "C")
       AND ($4::text[] IS NULL OR status = ANY($4))
       ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $5`,
      [
        endpointId,
        q.after?.createdAt ?? Number.MAX_SAFE_INTEGER,
        q.after?.id ?? '\u{10ffff}',
        q.statuses ?? null,
        Math.max(0, q.limit),
      ],
    );
    return r.rows.map(toRecord);
  },

  async recent(c: Queryable, endpointId: string, limit: number): Promise<JobRecord[]> {
    const r = await c.query<JobRow>(
      `SELECT ${READ_COLS} FROM jobs WHERE endpoint_id = $1 ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $2`,
      [endpointId, Math.max(0, limit)],
    );
    return r.rows.map(toRecord);
  },
};
