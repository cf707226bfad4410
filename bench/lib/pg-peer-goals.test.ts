// Issue #40's goals against the PostgreSQL peers: computed per round from the run's figures, the backends' CPU
// added to Berth's and BullMQ's figure (redis-server included) taken as it is.
import { describe, expect, it } from 'vitest';
import { evaluate } from './goals.js';
import { PG_PEER_GOALS } from './pg-peer-goals.js';

const figures: Record<string, Record<string, number[]>> = {
  'berth-postgres': {
    runsync_c50_rps: [2000, 2100, 1900],
    runsync_c50_cpu_ms_per_job: [0.4, 0.42, 0.38],
    runsync_c50_db_cpu_ms_per_job: [0.25, 0.2, 0.3],
  },
  'pg-boss': { runsync_c50_rps: [900, 1000, 1000] },
  'graphile-worker': { runsync_c50_rps: [2100, 1900, 1800] },
  'bullmq-aof-everysec': { runsync_c50_cpu_ms_per_job: [0.6, 0.6, 0.6] },
};
const pick = (t: string, k: string) => figures[t]?.[k] ?? [];

describe('PostgreSQL peer goals', () => {
  it('divides per round and decides by the spread', () => {
    const [boss, graphile, cpu] = PG_PEER_GOALS.map((g) => evaluate(g, pick));
    expect(boss!.values).toEqual([2000 / 900, 2.1, 1.9]);
    expect(boss!.verdict).toBe('UNDECIDED');
    expect(graphile!.values.map((v) => v.toFixed(3))).toEqual(['0.952', '1.105', '1.056']);
    expect(graphile!.verdict).toBe('UNDECIDED');
    expect(cpu!.values.map((v) => v.toFixed(3))).toEqual(['1.083', '1.033', '1.133']);
    expect(cpu!.verdict).toBe('MISS');
  });

  it('is not measured when a peer did not run', () => {
    const g = evaluate(PG_PEER_GOALS[0]!, (t, k) => (t === 'pg-boss' ? [] : pick(t, k)));
    expect(g.verdict).toBeUndefined();
  });
});
