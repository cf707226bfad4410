// Claims that ride in the insert of the job they take: the statements (one row, many rows, with the `queued`
// notification) and the record a claimed insert stands for.
import type { JobRecord } from '../types.js';
import { COLS, INSERT_TYPES } from './statements.js';
import { HELD_SEQ } from '../batch-types.js';

/**
 * A claim that rides in the statement inserting the job it may take (`InsertBatcher.attachClaim`): the dispatcher
 * pumps an endpoint in the same event-loop turn as a submit, so a worker with a free credit would otherwise claim
 * in a second round trip after the insert's commit. Here the insert itself stores the job as running on that
 * worker when no older job is queued on the endpoint (FIFO: otherwise it is queued as usual and the claim comes
 * back empty, so the dispatcher claims the older one next).
 */
export interface ClaimAsk {
  workerId: string;
  now: number;
  resolve: (job: JobRecord | undefined) => void;
  reject: (err: unknown) => void;
}

/** The job as the insert stored it when a claim took it: what `CLAIM_MANY_SQL` would have returned. */
export function claimedAtInsert(job: JobRecord, ask: ClaimAsk): JobRecord {
  return {
    ...job,
    status: 'IN_PROGRESS',
    attempt: job.attempt + 1,
    workerId: ask.workerId,
    startedAt: ask.now,
    executionDeadline: ask.now + job.executionTimeout,
  };
}

/**
 * `INSERT_MANY_SQL` whose rows with a worker id in $25 (text[], NULL for none) are stored running on that worker
 * ($26 now, $27 this replica as owner) when no job is queued on their endpoint (in the statement's snapshot: rows of
 * the same statement are not seen, and a row with a claim always comes before the rows of its endpoint without
 * one). Returns each stored id and whether it was claimed. Whether an endpoint has a job queued is one probe of
 * `jobs_queue` per endpoint of the batch (a LATERAL with LIMIT 1, which the planner cannot turn into a join): as an
 * `EXISTS` it became, in a generic plan while the table had no statistics, a merge semi join that read and sorted
 * every queued job of every endpoint (40-95 ms per insert at 1,000,000 queued; issue #40).
 */
/** Each inserted column's value: as given (`v(column)`), or the claimed one when `k` (the claim takes the job). */
const claimedCols = (v: (column: string, i: number) => string, worker: string) =>
  COLS.split(', ')
    .map((c, i) => {
      const x = v(c, i);
      if (c === 'status') return `CASE WHEN k THEN 'IN_PROGRESS' ELSE ${x} END`;
      if (c === 'attempt') return `${x} + k::int`;
      if (c === 'worker_id') return `CASE WHEN k THEN ${worker} ELSE ${x} END`;
      if (c === 'started_at') return `CASE WHEN k THEN $26::bigint ELSE ${x} END`;
      if (c === 'execution_deadline')
        return `CASE WHEN k THEN $26::bigint + ${v('execution_timeout', 6)} ELSE ${x} END`;
      return x;
    })
    .join(', ');
export const INSERT_CLAIM_SQL = `
  INSERT INTO jobs (${COLS}, queue_seq, owner)
  SELECT ${claimedCols((c) => c, 'claim_worker')}, CASE WHEN k THEN NULL ELSE nextval('queue_seq') END,
    CASE WHEN k THEN $27::text END
  FROM (
    SELECT t.*, (t.claim_worker IS NOT NULL AND t.endpoint_id <> ALL (busy.e)) AS k
    FROM unnest(${INSERT_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}, $25::text[])
      WITH ORDINALITY AS t(${COLS}, claim_worker, ord),
      (SELECT ARRAY(SELECT d.e FROM (SELECT DISTINCT e FROM unnest($2::text[]) AS e) d,
        LATERAL (SELECT 1 FROM jobs q WHERE q.endpoint_id = d.e AND q.status = 'IN_QUEUE' AND q.queue_seq < ${HELD_SEQ}
          ORDER BY q.queue_seq LIMIT 1) x) AS e) busy
    OFFSET 0
  ) t
  ORDER BY ord
  ON CONFLICT (id) DO NOTHING RETURNING id, endpoint_id, status = 'IN_PROGRESS' AS claimed`;

/**
 * One job ($1..$24 as `SQL.insertQueued`) stored running on worker $25 ($26 now, $27 owner) when no job is queued on
 * its endpoint, else queued: the common case at concurrency 1, scalar parameters and one check.
 */
export const INSERT_ONE_CLAIM_SQL = `
  INSERT INTO jobs (${COLS}, queue_seq, owner)
  SELECT ${claimedCols((_c, i) => `$${i + 1}::${INSERT_TYPES[i]}`, '$25::text')},
    CASE WHEN k THEN NULL ELSE nextval('queue_seq') END, CASE WHEN k THEN $27::text END
  FROM (SELECT NOT EXISTS (SELECT 1 FROM jobs q WHERE q.endpoint_id = $2::text AND q.status = 'IN_QUEUE' AND q.queue_seq < ${HELD_SEQ}) AS k OFFSET 0) f
  ON CONFLICT (id) DO NOTHING RETURNING id, status = 'IN_PROGRESS' AS claimed`;

/** `INSERT_CLAIM_SQL` that also sends the `queued` message of each endpoint it queued jobs on ($28 channel, $29 header). */
export const INSERT_CLAIM_NOTIFY_SQL = `WITH ins AS (${INSERT_CLAIM_SQL}),
  n AS (
    SELECT pg_notify($28, $29 || string_agg(DISTINCT E'\\nq' || to_json(endpoint_id)::text || E'\\t[]', '')) FROM ins
    WHERE NOT claimed HAVING count(*) > 0
  )
  SELECT id, claimed FROM ins WHERE (SELECT count(*) FROM n) >= 0`;
