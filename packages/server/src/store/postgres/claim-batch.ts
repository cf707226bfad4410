import type { JobRecord } from '../types.js';
import { toRecord, type JobRow } from './rows.js';

interface Waiter {
  workerId: string;
  now: number;
  resolve: (job: JobRecord | undefined) => void;
  reject: (err: unknown) => void;
}

/**
 * Claims of one endpoint issued in the same event-loop turn (a worker with 64 free credits asks for 64 jobs at
 * once) become one statement (`CLAIM_MANY_SQL` in `statements.ts`): it locks up to N of the oldest queued jobs with
 * `FOR UPDATE SKIP LOCKED` and gives the k-th oldest to the k-th caller, so FIFO order holds and an empty queue
 * costs one query, not N.
 */
export class ClaimBatcher {
  private readonly pending = new Map<string, Waiter[]>();

  constructor(
    /** Runs `CLAIM_MANY_SQL` with its parameters. */
    private readonly run: (params: unknown[]) => Promise<(JobRow & { rn: number })[]>,
    private readonly replicaId: () => string,
    /** Called with the endpoint when a batch found fewer jobs than it asked for (the queue ran dry). */
    private readonly onShort: (endpointId: string, gen: number) => void,
    private readonly gen: () => number,
  ) {}

  claim(endpointId: string, workerId: string, now: number): Promise<JobRecord | undefined> {
    return new Promise((resolve, reject) => {
      let list = this.pending.get(endpointId);
      if (!list) {
        this.pending.set(endpointId, (list = []));
        const gen = this.gen();
        setImmediate(() => void this.flush(endpointId, gen));
      }
      list.push({ workerId, now, resolve, reject });
    });
  }

  private async flush(endpointId: string, gen: number): Promise<void> {
    const batch = this.pending.get(endpointId) ?? [];
    this.pending.delete(endpointId);
    if (!batch.length) return;
    try {
      const rows = await this.run([
        endpointId,
        batch.length,
        batch.map((w) => w.workerId),
        batch[0]!.now,
        this.replicaId(),
      ]);
      const byRank = new Map(rows.map((r) => [Number(r.rn), r]));
      batch.forEach((w, i) => {
        const row = byRank.get(i + 1);
        w.resolve(row ? toRecord(row) : undefined);
      });
      if (rows.length < batch.length) this.onShort(endpointId, gen);
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
