/**
 * The goal table: each goal is computed per round from figures measured in that round, then summarised (median,
 * min–max) and given PASS/MISS. A goal set is a plain list of `GoalSpec`s; to add goals (another store, another
 * issue), write a list in its own file and append it to `GOAL_SETS` below.
 */
import { summarize, type Summary } from './stats.js';
import type { TargetResult } from './runner.js';
import { POSTGRES_GOALS } from './postgres-goals.js';
import { OBSERVE_GOALS } from './observe-goals.js';

export interface Goal {
  goal: string;
  /** Per round: the ratio or difference. */
  values: number[];
  summary: Summary;
  limit: number;
  kind: 'min' | 'max';
  /** undefined: not measured in this run (a target left out, or `note` says why). */
  pass: boolean | undefined;
  /** Why the goal was not measured, when it was not. */
  note?: string;
}

/** Figures of one target by key, per round (empty when the target or figure is absent). */
export type Pick = (target: string, key: string) => number[];

export interface GoalSpec {
  goal: string;
  kind: 'min' | 'max';
  limit: number;
  /** Per-round values from the run's figures. */
  values: (pick: Pick) => number[];
  /** A reason the figures cannot answer this goal in this run, if any. */
  unmeasured?: (pick: Pick) => string | undefined;
}

/** Per round: `f(a[i], b[i])`. */
export const pair = (a: number[], b: number[], f: (x: number, y: number) => number) =>
  a.map((x, i) => f(x, b[i] ?? NaN));
const ratio = (pick: Pick, a: string, b: string, key: string, keyB = key) =>
  pair(pick(a, key), pick(b, keyB), (x, y) => x / y);

/** Fewer queued jobs than this and heap per job is mostly the GC's noise (the old 2,000-job fill showed 359 B). */
export const MIN_HEAP_FILL = 20_000;

/** Issue #18: ahead of BullMQ on the durable path (the peer of the same durability class). */
export const DURABLE_PATH_GOALS: GoalSpec[] = [
  {
    goal: 'berth-sqlite-normal /runsync c=50 ÷ bullmq-aof-everysec',
    kind: 'min',
    limit: 2,
    values: (p) => ratio(p, 'berth-sqlite-normal', 'bullmq-aof-everysec', 'runsync_c50_rps'),
  },
  {
    goal: 'berth-sqlite-full /runsync c=50 ÷ bullmq-aof-always',
    kind: 'min',
    limit: 2,
    values: (p) => ratio(p, 'berth-sqlite-full', 'bullmq-aof-always', 'runsync_c50_rps'),
  },
  {
    goal: 'berth-sqlite-normal /run completions ÷ bullmq-aof-everysec',
    kind: 'min',
    limit: 1.5,
    values: (p) => ratio(p, 'berth-sqlite-normal', 'bullmq-aof-everysec', 'run_completions_per_s'),
  },
  {
    goal: 'berth-sqlite-normal drain ÷ bullmq-aof-everysec',
    kind: 'min',
    limit: 1.5,
    values: (p) => ratio(p, 'berth-sqlite-normal', 'bullmq-aof-everysec', 'drain_jobs_per_s'),
  },
  {
    goal: 'berth-memory /runsync c=50 CPU per job ÷ L1',
    kind: 'max',
    limit: 2,
    values: (p) => ratio(p, 'berth-memory', 'L1', 'runsync_c50_cpu_ms_per_job'),
  },
  {
    goal: 'berth-sqlite-normal /runsync c=50 CPU per job ÷ L1',
    kind: 'max',
    limit: 3,
    values: (p) => ratio(p, 'berth-sqlite-normal', 'L1', 'runsync_c50_cpu_ms_per_job'),
  },
  {
    goal: 'berth-sqlite-normal /runsync c=1 p50 − L1 p50 (ms)',
    kind: 'max',
    limit: 0.3,
    values: (p) => pair(p('berth-sqlite-normal', 'runsync_c1_p50_ms'), p('L1', 'runsync_c1_p50_ms'), (a, b) => a - b),
  },
  {
    goal: 'berth-sqlite-normal heap growth per queued job (B)',
    kind: 'max',
    limit: 200,
    values: (p) => p('berth-sqlite-normal', 'fill_heap_b_per_job'),
    unmeasured: (p) => {
      const n = p('berth-sqlite-normal', 'fill_jobs').find(Number.isFinite);
      return n !== undefined && n < MIN_HEAP_FILL
        ? `not measured: the fill queued ${n} jobs, under ${MIN_HEAP_FILL.toLocaleString('en-US')}`
        : undefined;
    },
  },
];

/** Every goal set the table shows, in order. */
export const GOAL_SETS: GoalSpec[][] = [DURABLE_PATH_GOALS, POSTGRES_GOALS, OBSERVE_GOALS];

export function evaluate(spec: GoalSpec, pick: Pick): Goal {
  const note = spec.unmeasured?.(pick);
  const values = note ? [] : spec.values(pick);
  const summary = summarize(values);
  const pass =
    summary.n === 0 ? undefined : spec.kind === 'min' ? summary.median >= spec.limit : summary.median <= spec.limit;
  return { goal: spec.goal, values, summary, limit: spec.limit, kind: spec.kind, pass, ...(note ? { note } : {}) };
}

/** The goals of every set, computed from this run's figures. */
export function goals(results: TargetResult[], sets: GoalSpec[][] = GOAL_SETS): Goal[] {
  const pick: Pick = (name, key) => results.find((r) => r.name === name)?.rounds[key] ?? [];
  return sets.flat().map((s) => evaluate(s, pick));
}
