/**
 * Issue #40: Berth on PostgreSQL against the queues a team with PostgreSQL and no Redis picks (pg-boss,
 * graphile-worker, on the same server), and its CPU per job, PostgreSQL's backends included, against BullMQ's with
 * redis-server's (BullMQ's `serverProcs` hold redis-server, so its figure includes its store).
 */
import { pair, ratioGoal, type GoalSpec } from './goal-spec.js';

const PG = 'berth-postgres';
const CPU = 'runsync_c50_cpu_ms_per_job';
const DB_CPU = 'runsync_c50_db_cpu_ms_per_job';
const BULLMQ = 'bullmq-aof-everysec';

export const PG_PEER_GOALS: GoalSpec[] = [
  ratioGoal(PG, 'pg-boss', 'runsync_c50_rps', 'min', 2, '/runsync c=50'),
  ratioGoal(PG, 'graphile-worker', 'runsync_c50_rps', 'min', 1, '/runsync c=50'),
  {
    goal: `${PG} /runsync c=50 CPU per job, PostgreSQL backends included, ÷ ${BULLMQ}'s, redis-server included`,
    kind: 'max',
    limit: 1,
    uses: [
      [PG, CPU],
      [PG, DB_CPU],
      [BULLMQ, CPU],
    ],
    values: (p) =>
      pair(
        pair(p(PG, CPU), p(PG, DB_CPU), (a, b) => a + b),
        p(BULLMQ, CPU),
        (a, b) => a / b,
      ),
  },
];
