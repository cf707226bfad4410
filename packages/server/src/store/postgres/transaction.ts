import type { Pool, PoolClient } from 'pg';
import { isConnectionError, toUnavailable } from './connect.js';

/**
 * Runs `fn` in a transaction on a connection of `pool` (BEGIN, COMMIT; ROLLBACK on error). Connection errors
 * become 503 `unavailable`; a connection that broke is dropped instead of being returned to the pool.
 */
export async function inTransaction<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  let c: PoolClient;
  try {
    c = await pool.connect();
  } catch (err) {
    return toUnavailable(err);
  }
  let broken: Error | undefined;
  // A checked-out connection that dies between two statements emits 'error' on the client (no pool listener
  // then): keep it from crashing the process; the next statement fails and the connection is dropped.
  const onError = (err: Error) => (broken = err);
  c.on('error', onError);
  try {
    await c.query('BEGIN');
    const out = await fn(c);
    await c.query('COMMIT');
    return out;
  } catch (err) {
    if (isConnectionError(err)) broken = err as Error;
    else await c.query('ROLLBACK').catch((e: Error) => (broken = e));
    return toUnavailable(err);
  } finally {
    c.off('error', onError);
    c.release(broken); // a broken connection is dropped, not returned to the pool
  }
}
