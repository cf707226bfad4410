/**
 * The goal table: each goal is computed per round from figures measured in that round, then summarised (median,
 * min–max) and given a verdict: PASS or MISS only when every round's value is on the same side of the target
 * (the spread does not straddle it), else UNDECIDED. A goal set is a plain list of `GoalSpec`s; to add goals
 * (another store, another issue), write a list in its own file and append it to `GOAL_SETS` below.
 */
import { summarize, type Summary } from './stats.js';
import type { TargetResult } from './target-result.js';
import { diffGoal, ratioGoal, type GoalSpec, type Pick } from './goal-spec.js';
import { BIG_GOALS } from './big-goals.js';
import { POSTGRES_GOALS } from './postgres-goals.js';
import { OBSERVE_GOALS } from './observe-goals.js';
import { PG_PEER_GOALS } from './pg-peer-goals.js';

export type Verdict = 'PASS' | 'MISS' | 'UNDECIDED';

export interface Goal {
  goal: string;
  /** Per round: the ratio or difference. */
  values: number[];
  summary: Summary;
  limit: number;
  kind: 'min' | 'max';
  /** undefined: not measured in this run (a target left out, or `note` says why). */
  verdict: Verdict | undefined;
  /** Why the goal was not measured, when it was not. */
  note?: string;
}

/** Fewer queued jobs than this and heap per job is mostly the GC's noise (the old 2,000-job fill showed 359 B). */
export const MIN_HEAP_FILL = 20_000;

const SQ = 'berth-sqlite-normal';
const PEER = 'bullmq-aof-everysec';

/** Issue #18: ahead of BullMQ on the durable path (the peer of the same durability class). */
export const DURABLE_PATH_GOALS: GoalSpec[] = [
  ratioGoal(SQ, PEER, 'runsync_c50_rps', 'min', 2, '/runsync c=50'),
  ratioGoal('berth-sqlite-full', 'bullmq-aof-always', 'runsync_c50_rps', 'min', 2, '/runsync c=50'),
  ratioGoal(SQ, PEER, 'run_completions_per_s', 'min', 1.5, '/run completions'),
  ratioGoal(SQ, PEER, 'drain_jobs_per_s', 'min', 1.5, 'drain'),
  ratioGoal('berth-memory', 'L1', 'runsync_c50_cpu_ms_per_job', 'max', 2, '/runsync c=50 CPU per job'),
  ratioGoal(SQ, 'L1', 'runsync_c50_cpu_ms_per_job', 'max', 3, '/runsync c=50 CPU per job'),
  diffGoal(`${SQ} /runsync c=1 p50 − L1 p50 (ms)`, SQ, 'L1', 'runsync_c1_p50_ms', 0.3),
  {
    goal: `${SQ} heap growth per queued job (B)`,
    kind: 'max',
    limit: 200,
    uses: [[SQ, 'fill_heap_b_per_job']],
    values: (p) => p(SQ, 'fill_heap_b_per_job'),
    unmeasured: (p) => {
      const n = p(SQ, 'fill_jobs').find(Number.isFinite);
      return n !== undefined && n < MIN_HEAP_FILL
        ? `not measured: the fill queued ${n} jobs, under ${MIN_HEAP_FILL.toLocaleString('en-US')}`
        : undefined;
    },
  },
];

/** Every goal set the table shows, in order. */
export const GOAL_SETS: GoalSpec[][] = [DURABLE_PATH_GOALS, POSTGRES_GOALS, PG_PEER_GOALS, OBSERVE_GOALS, BIG_GOALS];

/**
 * PASS or MISS when the whole spread (min–max over rounds) is on one side of the limit, UNDECIDED when it
 * straddles it: a median alone on this shared machine flipped between runs.
 */
export function verdict(s: Summary, kind: 'min' | 'max', limit: number): Verdict | undefined {
  if (s.n === 0) return undefined;
  const ok = (x: number) => (kind === 'min' ? x >= limit : x <= limit);
  if (ok(s.min) && ok(s.max)) return 'PASS';
  if (!ok(s.min) && !ok(s.max)) return 'MISS';
  return 'UNDECIDED';
}

export function evaluate(spec: GoalSpec, pick: Pick): Goal {
  const note = spec.unmeasured?.(pick);
  const values = note ? [] : spec.values(pick);
  const summary = summarize(values);
  return {
    goal: spec.goal,
    values,
    summary,
    limit: spec.limit,
    kind: spec.kind,
    verdict: verdict(summary, spec.kind, spec.limit),
    ...(note ? { note } : {}),
  };
}

/** The goals of every set, computed from this run's figures. */
export function goals(results: TargetResult[], sets: GoalSpec[][] = GOAL_SETS): Goal[] {
  const pick: Pick = (name, key) => results.find((r) => r.name === name)?.rounds[key] ?? [];
  return sets.flat().map((s) => evaluate(s, pick));
}
