// The quick preset's plan: every row once, then only the goals' targets and workloads, pairs side by side and
// every other round reversed; and the goal verdict that refuses to decide when the spread straddles the target.
import { describe, expect, it } from 'vitest';
import { FULL, QUICK } from '../config.js';
import type { Target, Workload } from '../targets/types.js';
import { ratioGoal } from './goal-spec.js';
import { verdict } from './goals.js';
import { goalWorkloads, roundPlan, totalRounds, workloadOf } from './plan.js';

const ALL: Workload[] = ['runsync', 'run', 'status', 'fill', 'stream'];
const t = (name: string): Target => ({ name, description: '', workloads: ALL, start: () => Promise.reject() });
const targets = ['L0', 'A', 'B', 'C'].map(t);
const sets = [
  [
    ratioGoal('A', 'B', 'runsync_c50_rps', 'min', 2, 'c50'),
    ratioGoal('C', 'B', 'drain_jobs_per_s', 'min', 1, 'drain'),
    ratioGoal('A', 'L0', 'runsync_c1_p50_ms', 'max', 1, 'c1'),
  ],
];

describe('bench plan', () => {
  it('maps figures to the workload that produces them', () => {
    expect(workloadOf('runsync_c1_p50_ms')).toBe('runsync');
    expect(workloadOf('run_completions_per_s')).toBe('run');
    expect(workloadOf('drain_jobs_per_s')).toBe('fill');
    expect(workloadOf('stream_chunk_p50_ms')).toBe('stream');
    expect(() => workloadOf('nonsense')).toThrow(/no workload/);
    expect([...goalWorkloads(sets)].map(([k, v]) => [k, [...v]])).toEqual([
      ['A', ['runsync']],
      ['B', ['runsync', 'fill']],
      ['C', ['fill']],
      ['L0', ['runsync']],
    ]);
  });

  it('runs every row in the first rounds, then only the goal rows and workloads, reversing every other round', () => {
    const cfg = { ...QUICK, rounds: 1, goalRounds: 3, fillRounds: 0, goalFillRounds: 3 };
    expect(totalRounds(cfg)).toBe(3);
    const r0 = roundPlan(targets, cfg, 0, sets);
    expect(r0.map((s) => s.target.name)).toEqual(['A', 'B', 'C', 'L0']);
    expect(r0.find((s) => s.target.name === 'L0')!.workloads).toEqual(['runsync', 'run', 'status', 'stream']);
    expect(r0.find((s) => s.target.name === 'A')!.cfg.c50Seconds).toBe(QUICK.goalSeconds);
    expect(r0.find((s) => s.target.name === 'L0')!.cfg.c50Seconds).toBe(QUICK.goalSeconds);
    // The longer c=1 run only where a goal reads the c=1 latency (A and L0), not B's.
    expect(r0.find((s) => s.target.name === 'A')!.cfg.c1Calls).toBe(QUICK.goalC1Calls);
    expect(r0.find((s) => s.target.name === 'B')!.cfg.c1Calls).toBe(QUICK.c1Calls);
    const r1 = roundPlan(targets, cfg, 1, sets);
    expect(r1.map((s) => [s.target.name, s.workloads])).toEqual([
      ['L0', ['runsync']],
      ['C', ['fill']],
      ['B', ['runsync', 'fill']],
      ['A', ['runsync']],
    ]);
    expect(roundPlan(targets, cfg, 2, sets).map((s) => s.target.name)).toEqual(['A', 'B', 'C', 'L0']);
  });

  it('runs the big payloads only where a goal reads them, in the first goalBigRounds rounds', () => {
    const big = (name: string): Target => ({ ...t(name), workloads: [...ALL, 'big'] });
    const bigSets = [[ratioGoal('A', 'L0', 'big_c1_ms', 'max', 1.2, 'big')]];
    const cfg = { ...QUICK, rounds: 1, goalRounds: 3, goalBigRounds: 2 };
    const bigIn = (round: number) =>
      roundPlan([big('L0'), big('A'), big('B')], cfg, round, bigSets)
        .filter((s) => s.workloads.includes('big'))
        .map((s) => s.target.name)
        .sort();
    expect([0, 1, 2].map(bigIn)).toEqual([['A', 'L0'], ['A', 'L0'], []]);
    const { goalBigRounds: _, ...everyRound } = cfg;
    expect(roundPlan([big('A'), big('L0')], everyRound, 2, bigSets)).toHaveLength(2);
  });

  it('the full preset runs every row every round and the fill in round 1 only', () => {
    expect(totalRounds(FULL)).toBe(FULL.rounds);
    const r1 = roundPlan(targets, FULL, 1, sets);
    expect(r1).toHaveLength(4);
    for (const s of r1) expect(s.workloads).not.toContain('fill');
    expect(roundPlan(targets, FULL, 0, sets).every((s) => s.workloads.includes('fill'))).toBe(true);
  });

  it('says PASS or MISS only when the spread is on one side of the target', () => {
    const s = (min: number, max: number) => ({ median: (min + max) / 2, min, max, n: 3 });
    expect(verdict(s(2.1, 2.5), 'min', 2)).toBe('PASS');
    expect(verdict(s(1.5, 1.9), 'min', 2)).toBe('MISS');
    expect(verdict(s(1.9, 2.1), 'min', 2)).toBe('UNDECIDED');
    expect(verdict(s(0.2, 0.29), 'max', 0.3)).toBe('PASS');
    expect(verdict(s(0.31, 0.5), 'max', 0.3)).toBe('MISS');
    expect(verdict({ median: NaN, min: NaN, max: NaN, n: 0 }, 'max', 1)).toBeUndefined();
  });
});
