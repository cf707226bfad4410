/**
 * Issues #31 and #35: 19 MiB `/runsync` bodies through Berth near a raw `node:http` echo, the event loop and
 * other clients never waiting behind them, memory that does not grow with them, and bodies whose bulk is outside
 * `input` refused cheaply. On SQLite (blob files) and PostgreSQL (values inline, bodies still streamed and
 * checked off the event loop).
 */
import { ratioGoal, type GoalSpec } from './goal-spec.js';

const ROWS = ['berth-sqlite-normal', 'berth-postgres'];

/** A goal on one figure of `row` alone, at most (or at least) `limit`. */
function plain(row: string, key: string, kind: 'min' | 'max', limit: number, label: string): GoalSpec {
  return { goal: `${row} ${label}`, kind, limit, uses: [[row, key]], values: (p) => p(row, key) };
}

export const BIG_GOALS: GoalSpec[] = ROWS.flatMap((B) => [
  ratioGoal(B, 'L0', 'big_c1_ms', 'max', 1.2, '19 MiB /runsync, one (time)'),
  ratioGoal(B, 'L0', 'big_c10_ms', 'max', 1.0, '19 MiB /runsync, ten at once (time)'),
  plain(B, 'big_c10_stall_ms', 'max', 20, 'longest event-loop stall, ten 19 MiB /runsync in flight (ms)'),
  plain(B, 'big_bystander_p99_ms', 'max', 50, 'small /runsync every 20 ms during the ten, p99 (ms)'),
  plain(B, 'big_bystander_max_ms', 'max', 100, 'small /runsync every 20 ms during the ten, max (ms)'),
  plain(B, 'big_c10_rss_growth_mb', 'max', 100, 'RSS growth with ten 19 MiB in flight (MB)'),
  plain(B, 'big_pad_refused', 'min', 3, 'three 19 MiB bodies with the bulk outside input: refused (of 3)'),
  plain(B, 'big_pad_cpu_ms_each', 'max', 50, 'CPU per refused padding body (ms)'),
]);
