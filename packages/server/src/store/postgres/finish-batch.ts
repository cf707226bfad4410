import type { JobRow } from './rows.js';
import { Coalescer } from './coalesce.js';

/** No limit: results of one turn go together and never wait for an earlier turn's (see `claim-batch.ts`). */
const FINISHES_IN_FLIGHT = Number.POSITIVE_INFINITY;

/**
 * Results of many jobs end in one statement (`FINISH_MANY_SQL` in `statements.ts`): each job's conditional
 * transition and the outcome counters, in one implicit transaction (one WAL flush for all of them). Results of
 * the same event-loop turn go together (`Coalescer`).
 */
export class FinishBatcher {
  private readonly batch: Coalescer<unknown[], JobRow | undefined>;

  constructor(
    /** Runs `FINISH_MANY_SQL` (one array per item parameter) or, for one item, `FINISH_ONE_SQL`. */
    run: (one: boolean, params: unknown[]) => Promise<(JobRow & { idx: number })[]>,
  ) {
    this.batch = new Coalescer<unknown[], JobRow | undefined>(async (items) => {
      const shard = Math.floor(Math.random() * 16);
      if (items.length === 1) return [(await run(true, [...items[0]!, shard]))[0]];
      const columns = Array.from({ length: 8 }, (_, c) => items.map((params) => params[c]));
      const rows = await run(false, [...columns, shard]);
      const byIdx = new Map(rows.map((r) => [Number(r.idx), r]));
      return items.map((_, i) => byIdx.get(i + 1));
    }, FINISHES_IN_FLIGHT);
  }

  /** Resolves with the finished row, or `undefined` when the job was not matched (stale, or it has a webhook). */
  add(params: unknown[]): Promise<JobRow | undefined> {
    return this.batch.add(params);
  }
}
