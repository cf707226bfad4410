import type { JobRecord } from '../types.js';
import { toRecord, type JobRow } from './rows.js';
import { Coalescer } from './coalesce.js';

/**
 * No limit: claims of one turn go together, and a turn's claims do not wait for the previous turn's. Tried: two
 * statements at once, later claims waiting for one to end. It batched almost nothing (a worker asks again after
 * each result, one at a time) and /status reads after a /run burst measured lower (1,503 against 1,831 req/s).
 */
const CLAIMS_IN_FLIGHT = Number.POSITIVE_INFINITY;

interface Ask {
  workerId: string;
  now: number;
}

/**
 * Claims of one endpoint issued in the same event-loop turn (a worker with 64 free credits asks for 64 jobs at
 * once) become one statement (`CLAIM_MANY_SQL` in
 * `statements.ts`): it locks up to N of the oldest queued jobs with `FOR UPDATE SKIP LOCKED` and gives the k-th
 * oldest to the k-th caller, so FIFO order holds and an empty queue costs one query, not N.
 */
export class ClaimBatcher {
  private readonly byEndpoint = new Map<string, Coalescer<Ask, JobRecord | undefined>>();

  constructor(
    /** Runs `CLAIM_MANY_SQL` with its parameters. */
    private readonly run: (params: unknown[]) => Promise<(JobRow & { rn: number; more: boolean })[]>,
    private readonly replicaId: () => string,
    /** Called with the endpoint when a batch found fewer jobs than it asked for, or took the last (the queue ran dry). */
    private readonly onShort: (endpointId: string, gen: number) => void,
    private readonly gen: () => number,
  ) {}

  claim(endpointId: string, workerId: string, now: number): Promise<JobRecord | undefined> {
    let c = this.byEndpoint.get(endpointId);
    if (!c) {
      c = new Coalescer((asks) => this.claimMany(endpointId, asks), CLAIMS_IN_FLIGHT);
      this.byEndpoint.set(endpointId, c);
    }
    return c.add({ workerId, now });
  }

  private async claimMany(endpointId: string, asks: Ask[]): Promise<(JobRecord | undefined)[]> {
    const gen = this.gen(); // before the statement: a job queued while it runs must not be hidden by `onShort`
    const rows = await this.run([endpointId, asks.length, asks.map((a) => a.workerId), asks[0]!.now, this.replicaId()]);
    const byRank = new Map(rows.map((r) => [Number(r.rn), r]));
    if (rows.length < asks.length || !rows[0]!.more) this.onShort(endpointId, gen);
    return asks.map((_, i) => {
      const row = byRank.get(i + 1);
      return row ? toRecord(row) : undefined;
    });
  }
}
