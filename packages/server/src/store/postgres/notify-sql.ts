import { CLAIM_MANY_CTE, INSERT_MANY_SQL } from './statements.js';

/**
 * Cluster notifications sent by the statement that made the change, when other replicas listen: they commit with
 * it and cost no round trip of their own. Only statements on the asynchronously committing pool carry them (see
 * `PgJobPath`: PostgreSQL serialises notifying commits). The payload format is the cluster channel's (`cluster/wire.ts`): the
 * sender's header line, then one message line.
 */

/** Optional record fields: the key and value, or nothing when the column is NULL (as `toRecord` omits them). */
const opt = (key: string, value: string) => `coalesce(',"${key}":' || ${value}, '')`;

/**
 * The JSON of the job record of a `jobs` row (alias `j`), as `JSON.stringify(toRecord(row))` would give it
 * (key order aside): stored JSON columns (input, output, progress, S3 config) go in as their text, unchanged.
 */
const RECORD_JSON = `'{"id":' || to_json(j.id)::text || ',"endpointId":' || to_json(j.endpoint_id)::text
  || ',"status":' || to_json(j.status)::text || ',"input":' || j.input || ',"executionTimeout":' || j.execution_timeout
  || ',"lowPriority":' || j.low_priority::text || ',"sync":' || j.sync::text || ',"attempt":' || j.attempt
  || ',"retries":' || j.retries || ',"createdAt":' || j.created_at || ',"queuedAt":' || j.queued_at
  || ',"expiresAt":' || j.expires_at
  || ${opt('webhook', 'to_json(j.webhook)::text')} || ${opt('s3Config', 'j.s3_config')}
  || ${opt('workerId', 'to_json(j.worker_id)::text')} || ${opt('output', 'j.output')} || ${opt('progress', 'j.progress')}
  || ${opt('error', 'to_json(j.error)::text')} || ${opt('startedAt', 'j.started_at::text')}
  || ${opt('finishedAt', 'j.finished_at::text')} || ${opt('executionDeadline', 'j.execution_deadline::text')}
  || ${opt('retainUntil', 'j.retain_until::text')} || ${opt('leaseUntil', 'j.lease_until::text')}
  || ${opt('cost', 'to_json(j.cost)::text')} || '}'`;

/**
 * A statement whose CTEs end with `j` (changed rows) that also sends, per changed job, its change event with the
 * record on channel $`ch` ($`ch+1`: the payload header): the line `encodeLine` would give it (keys in another
 * order), or the bare wake-up when the record is too large for a notification (over `MAX_CHUNK_DATA`, 6,000
 * bytes). Rows come back with `notified` true.
 */
const withEvents = (cte: string, ch: number) => `${cte}, r AS (SELECT j.id, ${RECORD_JSON} AS rec FROM j),
  n AS (
    SELECT pg_notify($${ch}, $${ch + 1} || E'\\n' || 'j' || to_json(r.id)::text || E'\\t["c"'
      || CASE WHEN octet_length(r.rec) <= 6000 THEN ',' || r.rec ELSE '' END || ']') FROM r
  )
  SELECT j.*, true AS notified FROM j WHERE (SELECT count(*) FROM n) >= 0`;

/** `CLAIM_MANY_SQL` sending the claimed (running) records ($6 channel, $7 header). */
export const CLAIM_MANY_NOTIFY_SQL = withEvents(CLAIM_MANY_CTE, 6);

/**
 * `INSERT_MANY_SQL` that also sends the `queued` message of each endpoint it queued jobs on ($25 channel, $26
 * header), in one notification; none when every row was a duplicate.
 */
export const INSERT_MANY_NOTIFY_SQL = `WITH ins AS (${INSERT_MANY_SQL.replace('RETURNING id', 'RETURNING id, endpoint_id')}),
  n AS (
    SELECT pg_notify($25, $26 || string_agg(DISTINCT E'\\nq' || to_json(endpoint_id)::text || E'\\t[]', '')) FROM ins
    HAVING count(*) > 0
  )
  SELECT id FROM ins WHERE (SELECT count(*) FROM n) >= 0`;
