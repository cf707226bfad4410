import type { JobRow } from './rows.js';

/**
 * Results of many jobs reported in the same event-loop turn end in one statement: each job's conditional
 * transition (IN_PROGRESS with that attempt, no webhook) and the outcome counters, in one implicit transaction.
 * Parameters per item: id, attempt, status, output (JSON text or null), error, now, keep_sync, keep_async.
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
    RETURNING jobs.*, v.idx
  ), s AS (
    INSERT INTO endpoint_stats (endpoint_id, shard, completed, failed)
    SELECT endpoint_id, $9, sum((status = 'COMPLETED')::int), sum((status <> 'COMPLETED')::int) FROM j GROUP BY endpoint_id
    ON CONFLICT (endpoint_id, shard) DO UPDATE SET completed = endpoint_stats.completed + EXCLUDED.completed, failed = endpoint_stats.failed + EXCLUDED.failed
  )
  SELECT * FROM j`;

interface Item {
  params: unknown[];
  resolve: (row: JobRow | undefined) => void;
  reject: (err: unknown) => void;
}

export class FinishBatcher {
  private pending: Item[] = [];

  constructor(private readonly run: (params: unknown[]) => Promise<(JobRow & { idx: number })[]>) {}

  /** Resolves with the finished row, or `undefined` when the job was not matched (stale, or it has a webhook). */
  add(params: unknown[]): Promise<JobRow | undefined> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => void this.flush());
      this.pending.push({ params, resolve, reject });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    if (!batch.length) return;
    try {
      const columns = Array.from({ length: 8 }, (_, c) => batch.map((it) => it.params[c]));
      const rows = await this.run([...columns, Math.floor(Math.random() * 16)]);
      const byIdx = new Map(rows.map((r) => [Number(r.idx), r]));
      batch.forEach((it, i) => it.resolve(byIdx.get(i + 1)));
    } catch (err) {
      for (const it of batch) it.reject(err);
    }
  }
}
