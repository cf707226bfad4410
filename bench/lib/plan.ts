/**
 * Which target runs which workloads in which round, and in what order. Rounds `0..rounds-1` run every target and
 * workload; the rounds after that, up to `goalRounds`, run only the targets and workloads the goal table uses
 * (`GoalSpec.uses`), so the few figures that decide a goal get more samples without every row paying for them.
 * Within a round, targets run in goal order (the two sides of a goal next to each other: sqlite-normal,
 * bullmq-aof-everysec, ...; a `@base` row next to its row), then the rest; big payloads run only on the rows a goal
 * reads them from; every other round runs in reverse (A B C, C B A), so a drift in the
 * machine's load during the run lands on both sides of a ratio alike.
 */
import type { Target, Workload } from '../targets/types.js';
import type { BenchConfig } from '../workloads/types.js';
import type { GoalSpec } from './goal-spec.js';
import { GOAL_SETS } from './goals.js';

/** The workload that produces a figure, from the figure key's prefix. */
export function workloadOf(key: string): Workload {
  if (key.startsWith('runsync_') || key === 'startup_ms') return 'runsync';
  if (key.startsWith('run_')) return 'run';
  if (key.startsWith('status_')) return 'status';
  if (key.startsWith('fill_') || key.startsWith('drain_')) return 'fill';
  if (key.startsWith('stream_')) return 'stream';
  if (key.startsWith('big_')) return 'big';
  throw new Error(`bench: no workload produces the figure ${key}`);
}

/** Target name -> the workloads some goal reads from it, in goal order. */
export function goalWorkloads(sets: GoalSpec[][] = GOAL_SETS): Map<string, Set<Workload>> {
  const m = new Map<string, Set<Workload>>();
  for (const g of sets.flat())
    for (const [target, key] of g.uses) {
      let s = m.get(target);
      if (!s) m.set(target, (s = new Set()));
      s.add(workloadOf(key));
    }
  return m;
}

export interface Step {
  target: Target;
  /** Workloads to run for it in this round (the target's own list, minus `--skip`). */
  workloads: Workload[];
  /** The sizes for this target: longer windows when a goal reads its `/runsync` figures. */
  cfg: BenchConfig;
}

/** Total rounds of the run: `goalRounds` when it is larger than `rounds`. */
export const totalRounds = (cfg: BenchConfig) => Math.max(cfg.rounds, cfg.goalRounds ?? 0);

/** The steps of round `round` (0-based), in the order they run. */
export function roundPlan(targets: readonly Target[], cfg: BenchConfig, round: number, sets = GOAL_SETS): Step[] {
  const used = goalWorkloads(sets);
  const c1Read = new Set(
    sets.flatMap((g) => g.flatMap((spec) => spec.uses.filter(([, k]) => k.startsWith('runsync_c1_')).map(([n]) => n))),
  );
  const order = [...used.keys()];
  const rank = (t: Target) => {
    const i = order.indexOf(t.name.replace(/@base$/, ''));
    return i < 0 ? order.length : i;
  };
  const sorted = [...targets].sort((a, b) => rank(a) - rank(b));
  if (round % 2 === 1) sorted.reverse();
  const steps: Step[] = [];
  for (const t of sorted) {
    // A `<name>@base` row (BENCH_BERTH_BASELINE) runs what its row runs: the before of a same-run before/after.
    const goalUse = used.get(t.name) ?? used.get(t.name.replace(/@base$/, ''));
    let workloads = t.workloads.filter((w) => !cfg.skip?.includes(w));
    if (round >= cfg.rounds) workloads = goalUse ? workloads.filter((w) => goalUse.has(w)) : [];
    // The fill is the long one: in the first `fillRounds` rounds, or `goalFillRounds` where a goal reads it.
    const fillRounds = (goalUse?.has('fill') ? cfg.goalFillRounds : undefined) ?? cfg.fillRounds ?? cfg.rounds;
    if (round >= fillRounds) workloads = workloads.filter((w) => w !== 'fill');
    // Big payloads (tens of seconds per row) only where a goal reads them, in the first `goalBigRounds` rounds.
    if (!goalUse?.has('big') || round >= (cfg.goalBigRounds ?? Number.POSITIVE_INFINITY))
      workloads = workloads.filter((w) => w !== 'big');
    if (workloads.length === 0) continue;
    const longer = goalUse?.has('runsync') || goalUse?.has('run');
    // More calls at c=1 only where a goal reads the c=1 latency (they take a second or more per row and round).
    const c1 = c1Read.has(t.name.replace(/@base$/, ''));
    steps.push({
      target: t,
      workloads,
      cfg: longer
        ? { ...cfg, c50Seconds: cfg.goalSeconds ?? cfg.c50Seconds, c1Calls: (c1 ? cfg.goalC1Calls : 0) || cfg.c1Calls }
        : cfg,
    });
  }
  return steps;
}
