import { createHash } from 'node:crypto';
import { BIG_VALUE_CHARS, INSERT_COLUMNS } from './rows.js';
import { BATCH_SEQ, HELD_SEQ } from '../batch-types.js';

/**
 * Every SQL text the PostgreSQL job store runs (`pg-store.ts`), apart from the code like the SQLite store's
 * `sqlite/statements.ts`. Each is a fixed template run as a named statement (`named`): PostgreSQL parses and
 * plans it once per connection. Conditions in WHERE make each write conditional (status and attempt).
 */

/**
 * The columns of a job record (`JobRow`), instead of `*`: the table has more (queue position, owner, stream and
 * log counters) that no caller of a record needs, and `pg` parses every column of every row it returns.
 */
export const COLS = INSERT_COLUMNS.replace(/\s+/g, ' ');
/** What reads of a job record name: the insert columns and the job's batch (set only by batch inserts). */
export const READ_COLS = `${COLS}, batch_id`;
/**
 * `READ_COLS`, each prefixed with `prefix`. `lean`: a big input left out (NULL), and a big output too unless
 * `lean.outputKeptIf` (SQL) holds. PostgreSQL sends a column's whole text and `pg` copies and decodes it on the event
 * loop: 40 MB for a 19 MiB job's input and output (issue #35). `octet_length` of a TOASTed value reads its header,
 * not the value.
 */
const readCols = (prefix: string, lean?: { outputKeptIf?: string }) =>
  READ_COLS.split(', ')
    .map((c) => {
      const col = `${prefix}${c}`;
      const small = `octet_length(${col}) < ${BIG_VALUE_CHARS}`;
      if (lean && c === 'input') return `CASE WHEN ${small} THEN ${col} END AS input`;
      if (lean?.outputKeptIf && c === 'output')
        return `CASE WHEN ${lean.outputKeptIf} OR ${small} THEN ${col} END AS output`;
      return col;
    })
    .join(', ');
const JOBS_COLS = readCols('jobs.');
/**
 * What a finish answers: the job without a big input, and without a big output unless the statement changed it
 * (a priced job's output gets its `cost`): the caller has the output it sent (`PgStore.finish` puts it back).
 */
const FINISHED_COLS = (prefix: string) => readCols(prefix, { outputKeptIf: `${prefix}cost IS NOT NULL` });
/** Queue positions a claim may take: held batch jobs (`HELD_SEQ` and up, batch-types.ts) are not claimable. */
const CLAIMABLE = `queue_seq < ${HELD_SEQ}`;
const RETAIN = (now: string, sync: string, async: string) =>
  `${now}::bigint + CASE WHEN sync THEN ${sync}::bigint ELSE ${async}::bigint END`;
const TERMINAL = `('COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT')`;
const insertSql = (seq: string) =>
  `INSERT INTO jobs (${INSERT_COLUMNS}, queue_seq) VALUES (${Array.from({ length: 24 }, (_, i) => `$${i + 1}`).join(', ')}, ${seq})`;
const stat = (
  column: 'completed' | 'failed' | 'retried',
) => `INSERT INTO endpoint_stats (endpoint_id, shard, ${column}) VALUES ($1, $2, 1)
  ON CONFLICT (endpoint_id, shard) DO UPDATE SET ${column} = endpoint_stats.${column} + 1`;
const due = (where: string, order: string, cols = READ_COLS) =>
  `SELECT ${cols} FROM jobs WHERE ${where} ORDER BY ${order} LIMIT $2`;

/** The SQL type of each insert column (`INSERT_COLUMNS`), for the arrays of a multi-row insert. */
export const INSERT_TYPES =
  `text text text text text text bigint boolean boolean int int text text text text bigint bigint bigint bigint bigint
  bigint bigint bigint float8`.split(/\s+/);

/**
 * Queued jobs of many requests in one statement (`insert-batch.ts`): one array per column ($1..$24, the order of
 * `INSERT_COLUMNS`), queue positions taken in array order (FIFO); an id already stored is skipped (RETURNING
 * lists the ids stored).
 */
export const INSERT_MANY_SQL = `
  INSERT INTO jobs (${INSERT_COLUMNS}, queue_seq)
  SELECT ${COLS}, nextval('queue_seq') FROM unnest(${INSERT_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})
    WITH ORDINALITY AS t(${COLS}, ord)
  ORDER BY ord
  ON CONFLICT (id) DO NOTHING RETURNING id`;

/**
 * Claims of one endpoint issued in the same event-loop turn (`claim-batch.ts`): locks up to $2 of the oldest queued
 * jobs with `FOR UPDATE SKIP LOCKED` and gives the k-th oldest to the k-th worker id of $3, so FIFO order holds
 * ($1 endpoint, $4 now, $5 this replica, the owner). `claimCtes(p, name)`: the same CTEs with parameter n written
 * `p(n)`, the claimed rows in CTE `name` (`finish-claim.ts` appends them to a finish statement). Each row also says
 * whether jobs beyond those claimed are queued (`more`).
 */
export const claimCtes = (p: (n: number) => string, name = 'j', range = CLAIMABLE) => `
  picked AS (
    SELECT id, queue_seq FROM jobs WHERE endpoint_id = ${p(1)} AND status = 'IN_QUEUE' AND ${range} ORDER BY queue_seq LIMIT ${p(2)} FOR UPDATE SKIP LOCKED
  ), numbered AS (
    SELECT id, row_number() OVER (ORDER BY queue_seq) AS rn FROM picked
  ), ${name} AS (
    UPDATE jobs SET status = 'IN_PROGRESS', attempt = attempt + 1, worker_id = (${p(3)}::text[])[numbered.rn], owner = ${p(5)},
    started_at = ${p(4)}::bigint, execution_deadline = ${p(4)}::bigint + execution_timeout, lease_until = NULL, progress = NULL, queue_seq = NULL,
    stream_len = 0, stream_taken = 0
  FROM numbered WHERE jobs.id = numbered.id
  RETURNING ${JOBS_COLS}, numbered.rn
  )`;
/**
 * Whether the endpoint ($n) has queued jobs beyond those `picked` (in the statement's snapshot, where the picked ones
 * are still queued): a claim that took all it asked for and leaves none lets the next one skip the database.
 */
export const MORE_QUEUED = (n: number) =>
  `(SELECT EXISTS (SELECT 1 FROM jobs q WHERE q.endpoint_id = $${n} AND q.status = 'IN_QUEUE' AND q.${CLAIMABLE} AND q.id NOT IN (SELECT id FROM picked)))`;
/**
 * A claim of one lane (issue #38, `ClaimLane`), parameters as `CLAIM_MANY_SQL`'s: interactive jobs only (below
 * `BATCH_SEQ`) or released batch jobs only. Not batched with the others: lanes are for endpoints with a batch lane.
 */
export const LANE_CLAIM_SQL = {
  interactive: `WITH ${claimCtes((n) => `$${n}`, 'j', `queue_seq < ${BATCH_SEQ}`)} SELECT j.* FROM j`,
  batch: `WITH ${claimCtes((n) => `$${n}`, 'j', `queue_seq >= ${BATCH_SEQ} AND ${CLAIMABLE}`)} SELECT j.* FROM j`,
};
export const CLAIM_MANY_SQL = `WITH ${claimCtes((n) => `$${n}`)} SELECT j.*, ${MORE_QUEUED(1)} AS more FROM j`;

/**
 * Results of many jobs reported in the same event-loop turn (`finish-batch.ts`): each job's conditional transition
 * (IN_PROGRESS with that attempt, no webhook) and the outcome counters, in one implicit transaction.
 * Parameters per item: id, attempt, status, output (JSON text or null), error, now, keep_sync, keep_async; $9: shard.
 */
export const FINISH_MANY_SQL = `
  WITH v AS (
    SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[])
      WITH ORDINALITY AS t(id, attempt, status, output, error, now, keep_sync, keep_async, idx)
  ), j AS (
    UPDATE jobs SET status = v.status, error = v.error, finished_at = v.now,
      retain_until = v.now + CASE WHEN jobs.sync THEN v.keep_sync ELSE v.keep_async END, execution_deadline = NULL, lease_until = NULL,
      output = CASE WHEN jobs.cost IS NOT NULL AND v.output IS NOT NULL AND jsonb_typeof(v.output::jsonb) = 'object'
        THEN (v.output::jsonb || jsonb_build_object('cost', jobs.cost))::text ELSE v.output END
    FROM v WHERE jobs.id = v.id AND jobs.status = 'IN_PROGRESS' AND jobs.attempt = v.attempt AND jobs.webhook IS NULL
    RETURNING ${FINISHED_COLS('jobs.')}, v.idx
  ), s AS (
    INSERT INTO endpoint_stats (endpoint_id, shard, completed, failed)
    SELECT endpoint_id, $9, sum((status = 'COMPLETED')::int), sum((status <> 'COMPLETED')::int) FROM j GROUP BY endpoint_id
    ON CONFLICT (endpoint_id, shard) DO UPDATE SET completed = endpoint_stats.completed + EXCLUDED.completed, failed = endpoint_stats.failed + EXCLUDED.failed
  )
  SELECT * FROM j`;

/**
 * `FINISH_MANY_SQL` for one job (parameters $1..$8 as one item's, $9 shard): the common case at low concurrency. With
 * scalar parameters PostgreSQL plans it once per connection; the array form is planned again at every execution
 * (its generic plan, costed for arrays of unknown length, loses to the custom one), which cost more than the
 * statement itself (measured: about 0.35 ms of planning per finish).
 */
export const FINISH_ONE_SQL = `
  WITH j AS (
    UPDATE jobs SET status = $3, error = $5, finished_at = $6::bigint, retain_until = ${RETAIN('$6', '$7', '$8')},
      execution_deadline = NULL, lease_until = NULL,
      output = CASE WHEN cost IS NOT NULL AND $4::text IS NOT NULL AND jsonb_typeof($4::jsonb) = 'object'
        THEN ($4::jsonb || jsonb_build_object('cost', cost))::text ELSE $4::text END
    WHERE id = $1 AND status = 'IN_PROGRESS' AND attempt = $2 AND webhook IS NULL
    RETURNING ${FINISHED_COLS('')}
  ), s AS (
    INSERT INTO endpoint_stats (endpoint_id, shard, completed, failed)
    SELECT endpoint_id, $9, (status = 'COMPLETED')::int, (status <> 'COMPLETED')::int FROM j
    ON CONFLICT (endpoint_id, shard) DO UPDATE SET completed = endpoint_stats.completed + EXCLUDED.completed, failed = endpoint_stats.failed + EXCLUDED.failed
  )
  SELECT * FROM j`;

/** The job store's statements, by name ($n parameters as documented per group). */
export const SQL = {
  insertQueued: insertSql("nextval('queue_seq')"),
  insertOther: insertSql('NULL'),
  /** A synchronous one-row write: flushes the WAL up to here (asynchronous commits included). */
  flush: `INSERT INTO settings (name, value) VALUES ('flush', '') ON CONFLICT (name) DO UPDATE SET value = ''`,
  get: `SELECT ${READ_COLS} FROM jobs WHERE id = $1`,
  /** `get` for a reader that does not need a big input (`Store.get(id, { input: false })`). */
  getLean: `SELECT ${readCols('', {})} FROM jobs WHERE id = $1`,
  stat: { completed: stat('completed'), failed: stat('failed'), retried: stat('retried') },
  /** $1 id, $2 attempt, $3 status, $4 output JSON, $5 error, $6 now, $7/$8 retention of sync/async jobs. */
  finish: `UPDATE jobs SET status = $3, error = $5, finished_at = $6::bigint, retain_until = ${RETAIN('$6', '$7', '$8')}, execution_deadline = NULL, lease_until = NULL,
      output = CASE WHEN cost IS NOT NULL AND $4::text IS NOT NULL AND jsonb_typeof($4::jsonb) = 'object'
        THEN ($4::jsonb || jsonb_build_object('cost', cost))::text ELSE $4::text END
    WHERE id = $1 AND status = 'IN_PROGRESS' AND attempt = $2 RETURNING ${READ_COLS}`,
  /** Whether a running attempt has a webhook (the batched finish leaves those to the transaction with the outbox). */
  hasWebhook: `SELECT 1 AS n FROM jobs WHERE id = $1 AND status = 'IN_PROGRESS' AND attempt = $2 AND webhook IS NOT NULL`,
  cancelLock: `SELECT ${READ_COLS} FROM jobs WHERE id = $1 AND status IN ('IN_QUEUE', 'IN_PROGRESS')
    AND (queue_seq IS NULL OR ${CLAIMABLE}) FOR UPDATE`,
  cancel: `UPDATE jobs SET status = 'CANCELLED', finished_at = $2::bigint, retain_until = ${RETAIN('$2', '$3', '$4')}, execution_deadline = NULL,
      lease_until = NULL, queue_seq = NULL
    WHERE id = $1 AND status IN ('IN_QUEUE', 'IN_PROGRESS') AND (queue_seq IS NULL OR ${CLAIMABLE}) RETURNING ${READ_COLS}`,
  retry: `UPDATE jobs SET status = 'IN_QUEUE', output = NULL, error = NULL, progress = NULL, worker_id = NULL, owner = NULL, started_at = NULL,
      finished_at = NULL, retain_until = NULL, retries = retries + 1, queued_at = $2, queue_seq = nextval('queue_seq') + CASE WHEN batch_id IS NULL THEN 0 ELSE ${BATCH_SEQ} END, stream_len = 0, stream_taken = 0
    WHERE id = $1 AND status IN ('FAILED', 'TIMED_OUT') RETURNING ${READ_COLS}`,
  requeue: `UPDATE jobs SET status = 'IN_QUEUE', progress = NULL, worker_id = NULL, owner = NULL, started_at = NULL, execution_deadline = NULL,
      lease_until = NULL, retries = retries + 1, queue_seq = nextval('queue_seq') + CASE WHEN batch_id IS NULL THEN 0 ELSE ${BATCH_SEQ} END, stream_len = 0, stream_taken = 0
    WHERE id = $1 AND status = 'IN_PROGRESS' AND attempt = $2 RETURNING ${READ_COLS}`,
  dropChunks: `DELETE FROM stream_chunks WHERE job_id = $1`,
  dropChunksOf: `DELETE FROM stream_chunks WHERE job_id = ANY($1)`,
  setProgress: `UPDATE jobs SET progress = $3 WHERE id = $1 AND status = 'IN_PROGRESS' AND attempt = $2`,
  /** Clearing the lease ($3 NULL) means the worker is connected to replica $4 again: it owns the job now. */
  setLease: `UPDATE jobs SET lease_until = $3, owner = CASE WHEN $3::bigint IS NULL THEN $4 ELSE owner END WHERE id = $1 AND status = 'IN_PROGRESS' AND attempt = $2`,
  runningOn: `SELECT ${READ_COLS} FROM jobs WHERE worker_id = $1 AND status = 'IN_PROGRESS'`,
  setExpiry: `UPDATE jobs SET expires_at = $2 WHERE id = $1`,
  purge: `DELETE FROM jobs WHERE endpoint_id = $1 AND status = 'IN_QUEUE' AND queue_seq < ${BATCH_SEQ} RETURNING id`,
  deleteIf: `DELETE FROM jobs WHERE id = $1 AND ($2::bigint IS NULL OR expires_at = $2) AND ($3::bigint IS NULL OR retain_until = $3)`,
  /** $1 ids, $2 their retain_until (a job whose retention changed since is left alone). */
  deleteRetained: `DELETE FROM jobs j USING unnest($1::text[], $2::bigint[]) AS d(id, retain_until)
    WHERE j.id = d.id AND j.retain_until = d.retain_until RETURNING j.id`,
  /** $1 now, $2 limit. */
  due: {
    expired: due(`expires_at <= $1`, 'expires_at'),
    timedOut: due(`execution_deadline <= $1 AND status = 'IN_PROGRESS'`, 'execution_deadline'),
    /** Only the id and retention: the sweep reads 2,048 at a time, and full rows cost both sides (issue #40). */
    retained: due(
      `retain_until <= $1 AND status IN ${TERMINAL} AND batch_id IS NULL`,
      'retain_until',
      'id, retain_until',
    ),
    leaseExpired: due(`lease_until <= $1 AND status = 'IN_PROGRESS'`, 'lease_until'),
  },
  countsDone: `SELECT (SELECT sum(completed) FROM endpoint_stats WHERE endpoint_id = $1)::bigint AS completed,
      (SELECT sum(failed) FROM endpoint_stats WHERE endpoint_id = $1)::bigint AS failed,
      (SELECT sum(retried) FROM endpoint_stats WHERE endpoint_id = $1)::bigint AS retried`,
  counts: `SELECT (SELECT sum(completed) FROM endpoint_stats WHERE endpoint_id = $1)::bigint AS completed,
      (SELECT sum(failed) FROM endpoint_stats WHERE endpoint_id = $1)::bigint AS failed,
      (SELECT sum(retried) FROM endpoint_stats WHERE endpoint_id = $1)::bigint AS retried,
      (SELECT count(*) FROM jobs WHERE endpoint_id = $1 AND status = 'IN_QUEUE' AND ${CLAIMABLE}) AS in_queue,
      (SELECT count(*) FROM jobs WHERE endpoint_id = $1 AND status = 'IN_PROGRESS') AS in_progress`,
  queueDepth: `SELECT count(*) AS n FROM jobs WHERE endpoint_id = $1 AND status = 'IN_QUEUE' AND ${CLAIMABLE}`,
  batchBacklog: `SELECT count(*) AS n FROM jobs WHERE endpoint_id = $1 AND status = 'IN_QUEUE' AND queue_seq >= ${BATCH_SEQ} AND ${CLAIMABLE}`,
  /** On start: $1 lease until, $2 this replica, $3 seen-since of a live replica. */
  leaseOrphans: `UPDATE jobs SET lease_until = $1 WHERE status = 'IN_PROGRESS' AND (lease_until IS NULL OR lease_until < $1)
      AND (owner IS NULL OR owner = $2 OR owner NOT IN (SELECT id FROM replicas WHERE seen_at >= $3 AND id <> $2))`,
  liveCounts: `SELECT (SELECT count(*) FROM jobs WHERE status = 'IN_QUEUE' AND ${CLAIMABLE}) AS queued,
      (SELECT count(*) FROM jobs WHERE status = 'IN_PROGRESS') AS running`,
  endpoints: `SELECT DISTINCT endpoint_id FROM jobs ORDER BY endpoint_id`,
  /** The cluster channel ($1) and one payload ($2) or several ($2 text[]). */
  notify: `SELECT pg_notify($1, $2)`,
  notifyMany: `SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`,
} as const;

const names = new Map<string, string>();

/** A named (prepared) statement: its name is a hash of the text, so the same text is prepared once per connection. */
export function named(text: string, values: unknown[] = []): { name: string; text: string; values: unknown[] } {
  let name = names.get(text);
  if (name === undefined) {
    name = `berth_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    names.set(text, name);
  }
  return { name, text, values };
}
