import { INSERT_MANY_SQL } from './statements.js';

/**
 * Cluster notifications sent by the statement that made the change, when other replicas listen: they commit with
 * it and cost no round trip of their own. Only statements on the asynchronously committing pool carry them (see
 * `PgJobPath`: PostgreSQL serialises notifying commits). The payload format is the cluster channel's (`cluster/wire.ts`): the
 * sender's header line, then one message line.
 */

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
