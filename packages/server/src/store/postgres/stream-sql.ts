import type { StreamSlice } from '../types.js';
import type { Run } from './pg-pools.js';
/**
 * Stream chunks of a running job on PostgreSQL, each operation one statement (no BEGIN/COMMIT round trips). They
 * run on a second pool whose connections commit asynchronously (`synchronous_commit = off`): a chunk is visible to
 * every replica as soon as it commits, but a crash of the PostgreSQL server itself may lose the last fraction of
 * a second of chunks of a job still running (results, and everything else, stay synchronous). Only one session
 * (the worker's) appends to a job, in order; readers take with a conditional move of `stream_taken`.
 */

/** Appends the chunks after `stream_len` (no gap, duplicates skipped); `n`: how many were new. */
const APPEND_CTE = `
  WITH prev AS (SELECT stream_len FROM jobs WHERE id = $1 AND status = 'IN_PROGRESS' AND attempt = $2),
  up AS (
    UPDATE jobs SET stream_len = $3 + cardinality($4::text[])
    WHERE id = $1 AND status = 'IN_PROGRESS' AND attempt = $2 AND stream_len >= $3 AND stream_len < $3 + cardinality($4::text[])
    RETURNING 1
  ), ins AS (
    INSERT INTO stream_chunks (job_id, seq, data)
    SELECT $1, $3 + t.i - 1, t.d FROM unnest($4::text[]) WITH ORDINALITY AS t(d, i), prev
    WHERE EXISTS (SELECT 1 FROM up) AND $3 + t.i - 1 >= prev.stream_len
    ON CONFLICT DO NOTHING RETURNING 1
  ), r AS (SELECT count(*)::int AS n FROM ins)`;
const APPEND_SQL = `${APPEND_CTE} SELECT n, false AS notified FROM r`;
/**
 * The same, and when every chunk was new, `pg_notify($5, $6)` in the same statement: the cluster channel's chunk
 * event (payload prepared by the caller) commits with the chunks, without a round trip of its own.
 */
const APPEND_NOTIFY_SQL = `${APPEND_CTE}
  SELECT n, CASE WHEN n = cardinality($4::text[]) THEN (SELECT true FROM pg_notify($5, $6)) ELSE false END AS notified FROM r`;

/** Moves `stream_taken` from $2 to $3 if no other reader moved it (and drops the chunks before it); $4: attempt or NULL. */
const CLAIM_SQL = `
  WITH t AS (UPDATE jobs SET stream_taken = $3 WHERE id = $1 AND stream_taken = $2 AND stream_len >= $3 AND ($4::int IS NULL OR attempt = $4) RETURNING 1),
  d AS (DELETE FROM stream_chunks WHERE job_id = $1 AND seq < $3 AND EXISTS (SELECT 1 FROM t))
  SELECT count(*)::int AS n FROM t`;

/** The untaken range and its chunks, from one snapshot (a chunk is committed with the `stream_len` that covers it). */
const PEEK_SQL = `
  SELECT j.stream_taken AS f, j.stream_len AS l, c.data FROM jobs j
  LEFT JOIN stream_chunks c ON c.job_id = j.id AND c.seq >= j.stream_taken AND c.seq < j.stream_len
  WHERE j.id = $1 ORDER BY c.seq`;

/** The chunks from $2 on (or from the first untaken one, if later) and the attempt, from one snapshot. */
const READ_SQL = `
  SELECT j.attempt AS a, GREATEST(j.stream_taken, $2::int) AS f, c.data FROM jobs j
  LEFT JOIN stream_chunks c ON c.job_id = j.id AND c.seq >= GREATEST(j.stream_taken, $2::int) AND c.seq < j.stream_len
  WHERE j.id = $1 ORDER BY c.seq`;

/** A notification to send with a chunk append (see `PgStreams.notice`). */
export interface ChunkNotice {
  channel: string;
  payload: string;
}

export const pgStream = {
  /** `notice`: a NOTIFY sent with the append when every chunk is new (`notified`). */
  async append(
    run: Run,
    id: string,
    attempt: number,
    seq: number,
    chunks: unknown[],
    notice?: ChunkNotice,
  ): Promise<{ n: number; notified: boolean }> {
    const data = chunks.map((x) => JSON.stringify(x) ?? 'null');
    const [r] = notice
      ? await run<{ n: number; notified: boolean }>(APPEND_NOTIFY_SQL, [
          id,
          attempt,
          seq,
          data,
          notice.channel,
          notice.payload,
        ])
      : await run<{ n: number; notified: boolean }>(APPEND_SQL, [id, attempt, seq, data]);
    return { n: r?.n ?? 0, notified: r?.notified === true };
  },

  async claim(run: Run, id: string, from: number, to: number, attempt: number | null = null): Promise<boolean> {
    const [r] = await run<{ n: number }>(CLAIM_SQL, [id, from, to, attempt]);
    return (r?.n ?? 0) > 0;
  },

  /** `Store.readStream`: chunks by position, nothing taken. */
  async read(run: Run, id: string, from: number): Promise<StreamSlice | undefined> {
    const rows = await run<{ a: number; f: number; data: string | null }>(READ_SQL, [id, from]);
    const head = rows[0];
    if (!head) return undefined;
    const chunks = rows.filter((r) => r.data !== null).map((r) => JSON.parse(r.data!) as unknown);
    return { attempt: head.a, from: head.f, chunks };
  },

  /**
   * Reads the untaken chunks and claims them; when another reader claimed first, reads again (a few times: readers
   * of one job are few). A reader with nothing new costs one read.
   */
  async take(run: Run, id: string): Promise<unknown[]> {
    for (let i = 0; i < 8; i++) {
      const rows = await run<{ f: number; l: number; data: string | null }>(PEEK_SQL, [id]);
      const head = rows[0];
      if (!head || head.f >= head.l) return [];
      if (await pgStream.claim(run, id, head.f, head.l))
        return rows.filter((r) => r.data !== null).map((r) => JSON.parse(r.data!) as unknown);
    }
    return [];
  },
};
