import type { JobRecord } from '../types.js';
import { bigParam, toRecord, type JobRow } from './rows.js';
import { Coalescer } from './coalesce.js';
import { FINISH_MANY_CLAIM_SQL, FINISH_ONE_CLAIM_SQL } from './finish-claim.js';
import { FINISH_MANY_SQL, FINISH_ONE_SQL } from './statements.js';
import { statShard } from './transitions.js';

/** Where the output is in one finish's parameters (`pgTransitions.finishParams`). */
const OUTPUT_PARAM = 3;

/** No limit: results of one turn go together and never wait for an earlier turn's (see `claim-batch.ts`). */
const FINISHES_IN_FLIGHT = Number.POSITIVE_INFINITY;

/** A claim riding in the next finish statement (`attachClaim`). */
interface RidingClaim {
  workerId: string;
  now: number;
  resolve: (r: RideResult) => void;
  reject: (err: unknown) => void;
}

type Row = JobRow & { idx?: number; claimed?: boolean; more?: boolean };
/** A riding claim's job (if any), and whether the queue ran dry (its statement left no job queued). */
export type RideResult = { job: JobRecord | undefined; drained: boolean };

/**
 * Results of many jobs end in one statement (`FINISH_MANY_SQL` in `statements.ts`): each job's conditional
 * transition and the outcome counters, in one implicit transaction (one WAL flush for all of them). Results of
 * the same event-loop turn go together (`Coalescer`). Claims of one endpoint issued in the same turn as those
 * results (the credits they free) ride in the same statement (`finish-claim.ts`).
 */
export class FinishBatcher {
  private readonly batch: Coalescer<unknown[], JobRow | undefined>;
  /** Finishes added and not yet sent: a claim issued now rides with them. */
  private waiting = 0;
  private ride: { endpointId: string; asks: RidingClaim[] } | undefined;

  constructor(
    /** Runs one statement: its rows. */
    private readonly run: (sql: string, params: unknown[]) => Promise<Row[]>,
    /** This replica's id (the owner of the jobs claimed). */
    replicaId: string,
    /** Called with the rows the claims took, before their callers hear of them. */
    onClaimed: (rows: JobRow[]) => void,
    /** Where the claims of a statement that failed go instead (the claim batcher). */
    fallback: (endpointId: string, workerId: string, now: number) => Promise<JobRecord | undefined>,
  ) {
    this.batch = new Coalescer<unknown[], JobRow | undefined>(async (items) => {
      this.waiting -= items.length;
      const ride = this.ride;
      this.ride = undefined;
      const one = items.length === 1;
      const params = one
        ? [...items[0]!, statShard()]
        : [...Array.from({ length: 8 }, (_, c) => items.map((p) => p[c])), statShard()];
      let rows: Row[];
      try {
        if (!ride) rows = await run(one ? FINISH_ONE_SQL : FINISH_MANY_SQL, params);
        else {
          const asks = ride.asks;
          const claim = [ride.endpointId, asks.length, asks.map((a) => a.workerId), asks[0]!.now, replicaId];
          rows = await run(one ? FINISH_ONE_CLAIM_SQL : FINISH_MANY_CLAIM_SQL, [...params, ...claim]);
        }
      } catch (err) {
        // The claims are not lost with the statement: they go out on their own (and fail there too if it was
        // the connection).
        for (const a of ride?.asks ?? [])
          fallback(ride!.endpointId, a.workerId, a.now).then((job) => a.resolve({ job, drained: false }), a.reject);
        throw err;
      }
      const finished = new Map<number, Row>();
      const claimed = new Map<number, Row>();
      for (const r of rows) (r.claimed ? claimed : finished).set(Number(r.idx ?? 1), r); // FINISH_ONE_SQL: no idx
      if (claimed.size) onClaimed([...claimed.values()]);
      if (ride) {
        const drained = claimed.size < ride.asks.length || ![...claimed.values()][0]!.more;
        ride.asks.forEach((a, i) => {
          const row = claimed.get(i + 1);
          a.resolve({ job: row && toRecord(row), drained });
        });
      }
      return items.map((_, i) => finished.get(i + 1));
    }, FINISHES_IN_FLIGHT);
  }

  /** Resolves with the finished row, or `undefined` when the job was not matched (stale, or it has a webhook). */
  add(params: unknown[]): Promise<JobRow | undefined> {
    // A big output (its bytes, `jsonParam`) goes in a statement of its own: a Buffer cannot go in the batch's text
    // arrays, and a big text there is escaped and copied with every other row's on the event loop.
    if (bigParam(params[OUTPUT_PARAM])) return this.run(FINISH_ONE_SQL, [...params, statShard()]).then(([r]) => r);
    this.waiting++;
    return this.batch.add(params);
  }

  /**
   * A claim on `endpointId` that rides in the statement of the finishes waiting to go out (the claims of one
   * endpoint per statement): the job it took (none: the queue had no job for it), and whether the queue ran dry. Undefined when no finish
   * waits, or the statement carries another endpoint's claims: claim on its own.
   */
  attachClaim(endpointId: string, workerId: string, now: number): Promise<RideResult> | undefined {
    if (this.waiting === 0 || (this.ride && this.ride.endpointId !== endpointId)) return undefined;
    this.ride ??= { endpointId, asks: [] };
    const asks = this.ride.asks;
    return new Promise((resolve, reject) => asks.push({ workerId, now, resolve, reject }));
  }
}
