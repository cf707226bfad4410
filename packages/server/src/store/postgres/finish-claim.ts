// Claims that ride in the statement of the finishes they follow: a worker's result frees a credit, and the
// dispatcher claims for it in the same event-loop turn (`worker-reports.ts`). Alone, that claim is a statement and a
// round trip of its own, one that often comes back empty (a replica told of each job queued elsewhere claims
// after every result).
import { claimCtes, FINISH_MANY_SQL, FINISH_ONE_SQL, MORE_QUEUED } from './statements.js';

/** `sql` (ending in `SELECT * FROM j`) with the claim CTEs appended ($first.. as `CLAIM_MANY_SQL`'s $1..$5). */
function withClaim(sql: string, first: number, finished: string): string {
  const tail = 'SELECT * FROM j';
  if (!sql.trimEnd().endsWith(tail)) throw new Error('a finish statement must end in SELECT * FROM j');
  const head = sql.trimEnd().slice(0, -tail.length).trimEnd();
  return `${head}, ${claimCtes((n) => `$${first + n - 1}`, 'c')}
  SELECT ${finished}, false AS claimed, false AS more FROM j UNION ALL SELECT c.*, true, ${MORE_QUEUED(first)} FROM c`;
}

/**
 * `FINISH_ONE_SQL` ($1..$9) and the claims of one endpoint ($10 endpoint, $11 how many, $12 worker ids, $13 now,
 * $14 this replica): one implicit transaction, so the claims commit with the finish (synchronously). Rows: the
 * finished job (`claimed` false, `idx` 1) and each claimed one (`claimed` true, `idx` its rank: the worker id it went to, and `more`: whether other jobs are
 * queued, as in `CLAIM_MANY_SQL`).
 */
export const FINISH_ONE_CLAIM_SQL = withClaim(FINISH_ONE_SQL, 10, 'j.*, 1::bigint AS idx');

/** `FINISH_MANY_SQL` ($1..$9) and the claims as in `FINISH_ONE_CLAIM_SQL` ($10..$14); `idx`: the item's index. */
export const FINISH_MANY_CLAIM_SQL = withClaim(FINISH_MANY_SQL, 10, 'j.*');
