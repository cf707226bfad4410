/** Issue #29: what JSON logs at info and tracing cost on `/runsync` c=50 (rows from BENCH_OBSERVE=1). */
import { pair, type GoalSpec, type Pick } from './goals.js';

const QUIET = 'berth-sqlite-normal';
const ratio = (p: Pick, a: string) => pair(p(a, 'runsync_c50_rps'), p(QUIET, 'runsync_c50_rps'), (x, y) => x / y);

export const OBSERVE_GOALS: GoalSpec[] = [
  {
    goal: `${QUIET}+logs (info, JSON) /runsync c=50 ÷ ${QUIET} (--log-level warn)`,
    kind: 'min',
    limit: 0.9,
    values: (p) => ratio(p, `${QUIET}+logs`),
  },
  {
    goal: `${QUIET}+trace (info, JSON, OTLP export) /runsync c=50 ÷ ${QUIET}`,
    kind: 'min',
    limit: 0.8,
    values: (p) => ratio(p, `${QUIET}+trace`),
  },
];
