import type { Database, Statement } from 'better-sqlite3';
import { JOB_COLUMNS } from './rows.js';
import { BATCH_SEQ, HELD_SEQ } from '../batch-types.js';

type Stmt = Statement<unknown[], unknown>;

/**
 * What a finish returns: the job's columns, but its output only when the store changed it (a priced job's cost):
 * otherwise the caller has the output it just stored (`SqliteCore.finish`), and reading back and parsing a 19 MB
 * output it already holds doubled the cost of a big result.
 */
const FINISH_COLUMNS = JOB_COLUMNS.replace(/\boutput\b/, 'CASE WHEN cost IS NULL THEN NULL ELSE output END');
/** The prepared statements, by name. */
export type Statements = Record<Exclude<StatementName, 'bumpStat'>, Stmt> & {
  bumpStat: Record<'completed' | 'failed' | 'retried', Stmt>;
};
type StatementName =
  | 'liveCounts'
  | 'maxSeq'
  | 'insert'
  | 'get'
  | 'claim'
  | 'claimRange'
  | 'batchBacklog'
  | 'finish'
  | 'cancel'
  | 'retry'
  | 'requeue'
  | 'setProgress'
  | 'streamLen'
  | 'addChunk'
  | 'setStreamLen'
  | 'streamState'
  | 'streamHead'
  | 'chunksFrom'
  | 'setStreamTaken'
  | 'dropChunksBelow'
  | 'dropChunks'
  | 'setLease'
  | 'runningOn'
  | 'setExpiry'
  | 'purge'
  | 'deleteIf'
  | 'dueExpired'
  | 'dueTimedOut'
  | 'dueRetained'
  | 'dueLease'
  | 'stats'
  | 'bumpStat'
  | 'leaseOrphans'
  | 'endpoints';

const RETAIN = `:now + CASE WHEN sync = 1 THEN :keep_sync ELSE :keep_async END`;

/** Every statement the store runs, prepared once. Conditions in WHERE make each write conditional. */
export function prepareStatements(db: Database): Statements {
  const p = (sql: string): Stmt => db.prepare(sql);
  // Statements that answer jobs: rows as arrays of JOB_COLUMNS (see rows.ts).
  const jobs = (sql: string): Stmt => db.prepare(sql).raw(true);
  return {
    // Held batch jobs (queue_seq >= HELD_SEQ, batch-types.ts) are not counted: they cannot be claimed.
    liveCounts: p(
      `SELECT endpoint_id, status, count(*) AS n FROM jobs WHERE status IN ('IN_QUEUE', 'IN_PROGRESS')
        AND (queue_seq IS NULL OR queue_seq < ${HELD_SEQ}) GROUP BY endpoint_id, status`,
    ),
    maxSeq: p(`SELECT max(queue_seq) AS m FROM jobs WHERE queue_seq < ${BATCH_SEQ}`),
    insert:
      p(`INSERT INTO jobs (id, endpoint_id, status, input, webhook, s3_config, execution_timeout, low_priority, sync, attempt,
        retries, worker_id, output, progress, error, created_at, queued_at, started_at, finished_at, expires_at, execution_deadline,
        retain_until, lease_until, cost, queue_seq)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    get: jobs(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ?`),
    // The head of the queue by rowid: the queue index holds it (a covering search), and the row is then found by
    // rowid, not by a second search of the id index.
    claim:
      jobs(`UPDATE jobs SET status = 'IN_PROGRESS', attempt = attempt + 1, worker_id = :worker_id, started_at = :now,
        execution_deadline = :now + execution_timeout, lease_until = NULL, progress = NULL, queue_seq = NULL,
        stream_len = 0, stream_taken = 0
      WHERE rowid = (SELECT rowid FROM jobs WHERE endpoint_id = :endpoint_id AND status = 'IN_QUEUE' AND queue_seq < ${HELD_SEQ}
        ORDER BY queue_seq LIMIT 1)
      RETURNING ${JOB_COLUMNS}`),
    // A lane's claim (issue #38): queue positions in [:lo, :hi) only, interactive ones or released batch ones.
    claimRange:
      jobs(`UPDATE jobs SET status = 'IN_PROGRESS', attempt = attempt + 1, worker_id = :worker_id, started_at = :now,
        execution_deadline = :now + execution_timeout, lease_until = NULL, progress = NULL, queue_seq = NULL,
        stream_len = 0, stream_taken = 0
      WHERE rowid = (SELECT rowid FROM jobs WHERE endpoint_id = :endpoint_id AND status = 'IN_QUEUE'
        AND queue_seq >= :lo AND queue_seq < :hi ORDER BY queue_seq LIMIT 1)
      RETURNING ${JOB_COLUMNS}`),
    batchBacklog: p(`SELECT count(*) AS n FROM jobs WHERE endpoint_id = ? AND status = 'IN_QUEUE'
      AND queue_seq >= ${BATCH_SEQ} AND queue_seq < ${HELD_SEQ}`),
    // A priced job's COMPLETED object output gets its cost in the same write (JobRecord.cost).
    finish: jobs(`UPDATE jobs SET status = :status, error = :error,
        output = CASE WHEN cost IS NOT NULL AND :output IS NOT NULL AND json_type(:output) = 'object'
          THEN json_set(:output, '$.cost', cost) ELSE :output END, finished_at = :now, retain_until = ${RETAIN},
        execution_deadline = NULL, lease_until = NULL
      WHERE id = :id AND status = 'IN_PROGRESS' AND attempt = :attempt RETURNING ${FINISH_COLUMNS}`),
    cancel:
      jobs(`UPDATE jobs SET status = 'CANCELLED', finished_at = :now, retain_until = ${RETAIN}, execution_deadline = NULL,
        lease_until = NULL, queue_seq = NULL
      WHERE id = :id AND status IN ('IN_QUEUE', 'IN_PROGRESS') AND (queue_seq IS NULL OR queue_seq < ${HELD_SEQ})
      RETURNING ${JOB_COLUMNS}`),
    retry:
      jobs(`UPDATE jobs SET status = 'IN_QUEUE', output = NULL, error = NULL, progress = NULL, worker_id = NULL, started_at = NULL,
        finished_at = NULL, retain_until = NULL, retries = retries + 1, queued_at = :now, queue_seq = CASE WHEN batch_id IS NULL THEN :seq ELSE :seq + ${BATCH_SEQ} END, stream_len = 0, stream_taken = 0
      WHERE id = :id AND status IN ('FAILED', 'TIMED_OUT') RETURNING ${JOB_COLUMNS}`),
    requeue:
      jobs(`UPDATE jobs SET status = 'IN_QUEUE', progress = NULL, worker_id = NULL, started_at = NULL, execution_deadline = NULL,
        lease_until = NULL, retries = retries + 1, queue_seq = CASE WHEN batch_id IS NULL THEN :seq ELSE :seq + ${BATCH_SEQ} END, stream_len = 0, stream_taken = 0
      WHERE id = :id AND status = 'IN_PROGRESS' AND attempt = :attempt RETURNING ${JOB_COLUMNS}`),
    setProgress: p(
      `UPDATE jobs SET progress = :progress WHERE id = :id AND status = 'IN_PROGRESS' AND attempt = :attempt`,
    ),
    streamLen: p(`SELECT stream_len FROM jobs WHERE id = ? AND status = 'IN_PROGRESS' AND attempt = ?`),
    addChunk: p(`INSERT OR IGNORE INTO stream_chunks (job_id, seq, data) VALUES (?, ?, ?)`),
    setStreamLen: p(`UPDATE jobs SET stream_len = ? WHERE id = ?`),
    streamState: p(`SELECT stream_len, stream_taken FROM jobs WHERE id = ?`),
    streamHead: p(`SELECT attempt, stream_len, stream_taken FROM jobs WHERE id = ?`),
    chunksFrom: p(`SELECT data FROM stream_chunks WHERE job_id = ? AND seq >= ? ORDER BY seq`),
    setStreamTaken: p(`UPDATE jobs SET stream_taken = ? WHERE id = ?`),
    dropChunksBelow: p(`DELETE FROM stream_chunks WHERE job_id = ? AND seq < ?`),
    dropChunks: p(`DELETE FROM stream_chunks WHERE job_id = ?`),
    setLease: p(
      `UPDATE jobs SET lease_until = :until WHERE id = :id AND status = 'IN_PROGRESS' AND attempt = :attempt`,
    ),
    runningOn: jobs(`SELECT ${JOB_COLUMNS} FROM jobs WHERE worker_id = ? AND status = 'IN_PROGRESS'`),
    setExpiry: p(`UPDATE jobs SET expires_at = ? WHERE id = ?`),
    // Batch jobs are left to their batch (cancel it).
    purge: p(
      `DELETE FROM jobs WHERE endpoint_id = ? AND status = 'IN_QUEUE' AND queue_seq < ${BATCH_SEQ} RETURNING id`,
    ),
    deleteIf: p(`DELETE FROM jobs WHERE id = :id
        AND (:expires_at IS NULL OR expires_at = :expires_at) AND (:retain_until IS NULL OR retain_until = :retain_until)
      RETURNING endpoint_id, status, queue_seq`),
    dueExpired: jobs(`SELECT ${JOB_COLUMNS} FROM jobs WHERE expires_at <= ? ORDER BY expires_at LIMIT ?`),
    dueTimedOut: jobs(
      `SELECT ${JOB_COLUMNS} FROM jobs WHERE execution_deadline <= ? AND status = 'IN_PROGRESS' ORDER BY execution_deadline LIMIT ?`,
    ),
    // Only what the sweep deletes by: a finished job's output can be megabytes, read for nothing at 1M due rows.
    dueRetained: p(
      `SELECT id, retain_until FROM jobs WHERE retain_until <= ? AND status IN ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT')
        AND batch_id IS NULL ORDER BY retain_until LIMIT ?`,
    ),
    dueLease: jobs(
      `SELECT ${JOB_COLUMNS} FROM jobs WHERE lease_until <= ? AND status = 'IN_PROGRESS' ORDER BY lease_until LIMIT ?`,
    ),
    stats: p(`SELECT completed, failed, retried FROM endpoint_stats WHERE endpoint_id = ?`),
    bumpStat: {
      completed: p(
        `INSERT INTO endpoint_stats (endpoint_id, completed) VALUES (?, 1) ON CONFLICT (endpoint_id) DO UPDATE SET completed = completed + 1`,
      ),
      failed: p(
        `INSERT INTO endpoint_stats (endpoint_id, failed) VALUES (?, 1) ON CONFLICT (endpoint_id) DO UPDATE SET failed = failed + 1`,
      ),
      retried: p(
        `INSERT INTO endpoint_stats (endpoint_id, retried) VALUES (?, 1) ON CONFLICT (endpoint_id) DO UPDATE SET retried = retried + 1`,
      ),
    },
    endpoints: p(`SELECT DISTINCT endpoint_id FROM jobs ORDER BY endpoint_id`),
    // Every running job gets at least the grace of this start: its worker could not reconnect while nobody listened.
    leaseOrphans: p(
      `UPDATE jobs SET lease_until = :until WHERE status = 'IN_PROGRESS' AND (lease_until IS NULL OR lease_until < :until)`,
    ),
  };
}
