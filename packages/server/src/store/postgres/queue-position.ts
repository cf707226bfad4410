import type { Run } from './pg-pools.js';

/**
 * `Store.queuePosition` on PostgreSQL: the queued jobs of the job's endpoint with a smaller `queue_seq` (one
 * sequence shared by every replica), counted on the `jobs_queue` index up to `$2`, in one statement. Approximate:
 * what this snapshot holds. A job another replica inserted with a smaller `queue_seq` but has not committed yet
 * (a /runsync insert commits asynchronously) is not counted, and claims commit on every replica while clients read.
 */
const POSITION_SQL = `
  SELECT (SELECT count(*)::int FROM (
    SELECT 1 FROM jobs q
    WHERE q.endpoint_id = j.endpoint_id AND q.status = 'IN_QUEUE' AND q.queue_seq < j.queue_seq
    LIMIT $2) ahead) AS n
  FROM jobs j WHERE j.id = $1 AND j.status = 'IN_QUEUE'`;

export async function pgQueuePosition(run: Run, id: string, cap: number): Promise<number | undefined> {
  const [r] = await run<{ n: number }>(POSITION_SQL, [id, Math.max(0, cap)]);
  return r?.n;
}
