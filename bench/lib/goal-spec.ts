/** What a goal is (`GoalSpec`) and the two shapes most goals take: a ratio or a difference of one figure. */

/** Figures of one target by key, per round (empty when the target or figure is absent). */
export type Pick = (target: string, key: string) => number[];

export interface GoalSpec {
  goal: string;
  kind: 'min' | 'max';
  limit: number;
  /** The figures the goal is computed from, as [target, figure key]: the quick preset measures these longer. */
  uses: [target: string, key: string][];
  /** Per-round values from the run's figures. */
  values: (pick: Pick) => number[];
  /** A reason the figures cannot answer this goal in this run, if any. */
  unmeasured?: (pick: Pick) => string | undefined;
}

/** Per round: `f(a[i], b[i])`. */
export const pair = (a: number[], b: number[], f: (x: number, y: number) => number) =>
  a.map((x, i) => f(x, b[i] ?? NaN));

/** A goal on `a`'s figure `key` divided by `b`'s, per round. */
export function ratioGoal(
  a: string,
  b: string,
  key: string,
  kind: 'min' | 'max',
  limit: number,
  label: string,
  goal = `${a} ${label} ÷ ${b}`,
): GoalSpec {
  return {
    goal,
    kind,
    limit,
    uses: [
      [a, key],
      [b, key],
    ],
    values: (p) => pair(p(a, key), p(b, key), (x, y) => x / y),
  };
}

/** A goal on `a`'s figure `key` minus `b`'s, per round, at most `limit`. */
export function diffGoal(goal: string, a: string, b: string, key: string, limit: number): GoalSpec {
  return {
    goal,
    kind: 'max',
    limit,
    uses: [
      [a, key],
      [b, key],
    ],
    values: (p) => pair(p(a, key), p(b, key), (x, y) => x - y),
  };
}
