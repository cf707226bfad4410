import type { JobRow } from './rows.js';

interface Item {
  params: unknown[];
  resolve: (row: JobRow | undefined) => void;
  reject: (err: unknown) => void;
}

/**
 * Results of many jobs reported in the same event-loop turn end in one statement (`FINISH_MANY_SQL` in
 * `statements.ts`): each job's conditional transition and the outcome counters, in one implicit transaction.
 */
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
