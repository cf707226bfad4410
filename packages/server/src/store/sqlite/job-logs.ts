import type { Database } from 'better-sqlite3';
import { JOB_LOG_MAX_LINES, type JobListQuery, type JobLog, type JobLogLine } from '../types.js';
import { JOB_COLUMNS, toRecord, type RawJobRow } from './rows.js';
import { toLogLine, type LogRow } from '../job-row.js';
import type { JobRecord } from '../types.js';
import type { BigInputs } from './big-inputs.js';

/**
 * Per-job logs (table `job_logs`, counters `jobs.log_len` / `jobs.log_dropped`) and the recent-jobs listing.
 * Every method runs inside the caller's transaction (`SqliteStore` calls them from `tx.write` / `tx.read`).
 */
export class SqliteJobLogs {
  private readonly st;

  constructor(
    db: Database,
    private readonly big: BigInputs,
  ) {
    this.st = {
      state: db.prepare(`SELECT log_len, log_dropped FROM jobs WHERE id = ?`),
      add: db.prepare(
        `INSERT OR IGNORE INTO job_logs (job_id, seq, at, level, message, worker_id, attempt, fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      bump: db.prepare(`UPDATE jobs SET log_len = log_len + ?, log_dropped = log_dropped + ? WHERE id = ?`),
      lines: db.prepare(
        `SELECT at, level, message, worker_id, attempt, fields FROM job_logs WHERE job_id = ? ORDER BY seq`,
      ),
      drop: db.prepare(`DELETE FROM job_logs WHERE job_id = ?`),
      recent: db
        .prepare(`SELECT ${JOB_COLUMNS} FROM jobs WHERE endpoint_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`)
        .raw(true),
      // `listJobs`: after a (created_at, id) key, states as ',A,B,' (or NULL: all), on the jobs_recent index.
      page: db
        .prepare(
          `SELECT ${JOB_COLUMNS} FROM jobs WHERE endpoint_id = :ep AND (created_at, id) < (:at, :id)
           AND (:states IS NULL OR instr(:states, ',' || status || ',') > 0)
           ORDER BY created_at DESC, id DESC LIMIT :limit`,
        )
        .raw(true),
    };
  }

  append(id: string, lines: JobLogLine[]): number {
    const r = this.st.state.get(id) as { log_len: number; log_dropped: number } | undefined;
    if (!r) return 0;
    const kept = lines.slice(0, Math.max(0, JOB_LOG_MAX_LINES - r.log_len));
    let seq = r.log_len;
    for (const l of kept) {
      this.st.add.run(
        id,
        seq++,
        l.at,
        l.level,
        l.message,
        l.workerId,
        l.attempt,
        l.fields === undefined ? null : JSON.stringify(l.fields),
      );
    }
    this.st.bump.run(kept.length, lines.length - kept.length, id);
    return kept.length;
  }

  get(id: string): JobLog | undefined {
    const r = this.st.state.get(id) as { log_len: number; log_dropped: number } | undefined;
    if (!r) return undefined;
    return { lines: (this.st.lines.all(id) as LogRow[]).map(toLogLine), dropped: r.log_dropped };
  }

  /** With the job's row. */
  jobDeleted(id: string): void {
    this.st.drop.run(id);
  }

  page(endpointId: string, q: JobListQuery): JobRecord[] {
    const rows = this.st.page.all({
      ep: endpointId,
      at: q.after?.createdAt ?? Number.MAX_SAFE_INTEGER,
      id: q.after?.id ?? '\uffff',
      states: q.statuses ? `,${q.statuses.join(',')},` : null,
      limit: Math.max(0, q.limit),
    }) as RawJobRow[];
    return rows.map((r) => toRecord(r, this.big));
  }

  recent(endpointId: string, limit: number): JobRecord[] {
    return (this.st.recent.all(endpointId, Math.max(0, limit)) as RawJobRow[]).map((r) => toRecord(r, this.big));
  }
}
