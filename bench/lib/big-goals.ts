/** Issue #31: a 19 MiB `/runsync` through Berth near a raw `node:http` echo, and the event loop kept responsive. */
import { ratioGoal, type GoalSpec } from './goal-spec.js';

const B = 'berth-sqlite-normal';

export const BIG_GOALS: GoalSpec[] = [
  ratioGoal(B, 'L0', 'big_c1_ms', 'max', 1.5, '19 MiB /runsync, one (time)'),
  ratioGoal(B, 'L0', 'big_c10_ms', 'max', 1.5, '19 MiB /runsync, ten at once (time)'),
  {
    goal: `${B} longest event-loop stall, ten 19 MiB /runsync in flight (ms)`,
    kind: 'max',
    limit: 50,
    uses: [[B, 'big_c10_stall_ms']],
    values: (p) => p(B, 'big_c10_stall_ms'),
  },
];
