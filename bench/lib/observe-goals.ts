/**
 * Issue #29: what JSON logs at info and tracing cost on `/runsync` c=50 (rows from BENCH_OBSERVE=1); issue #40:
 * tracing every job ÷ tracing off, both with the same logs (`+logs`), ≥ 0.85, and the same at 10% head sampling.
 */
import { ratioGoal, type GoalSpec } from './goal-spec.js';

const QUIET = 'berth-sqlite-normal';

export const OBSERVE_GOALS: GoalSpec[] = [
  ratioGoal(
    `${QUIET}+logs`,
    QUIET,
    'runsync_c50_rps',
    'min',
    0.9,
    '',
    `${QUIET}+logs (info, JSON) /runsync c=50 ÷ ${QUIET} (--log-level warn)`,
  ),
  ratioGoal(
    `${QUIET}+trace`,
    QUIET,
    'runsync_c50_rps',
    'min',
    0.8,
    '',
    `${QUIET}+trace (info, JSON, OTLP export) /runsync c=50 ÷ ${QUIET}`,
  ),
  ratioGoal(
    `${QUIET}+trace`,
    `${QUIET}+logs`,
    'runsync_c50_rps',
    'min',
    0.85,
    '',
    `${QUIET}+trace (every job traced) /runsync c=50 ÷ ${QUIET}+logs (tracing off, same logs)`,
  ),
  ratioGoal(
    `${QUIET}+trace10`,
    `${QUIET}+logs`,
    'runsync_c50_rps',
    'min',
    0.85,
    '',
    `${QUIET}+trace10 (10% of jobs traced) /runsync c=50 ÷ ${QUIET}+logs`,
  ),
];
