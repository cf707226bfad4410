/**
 * Issues #17 and #31: the PostgreSQL store keeps pace (BullMQ of the same class, SSE over L1, replicas' cost per job).
 * #31 raised the /runsync c=50 ratio to 1.2 and lowered the c=1 p50 to 2 ms, and counts the PostgreSQL backends' CPU
 * too (`*_db_cpu_ms_per_job`: they share the machine's cores, as redis-server does for BullMQ, whose CPU is counted).
 */
import { diffGoal, pair, ratioGoal, type GoalSpec, type Pick } from './goal-spec.js';

const PG = 'berth-postgres';
const PG3 = 'berth-postgres-x3';
const PEER = 'bullmq-aof-everysec';
const SSE = 'stream_chunk_p50_ms';
const CPU = 'runsync_c50_cpu_ms_per_job';
const DB_CPU = 'runsync_c50_db_cpu_ms_per_job';
/** Server, worker and PostgreSQL backends' CPU per job, per round. */
const total = (p: Pick, t: string) => pair(p(t, CPU), p(t, DB_CPU), (a, b) => a + b);

export const POSTGRES_GOALS: GoalSpec[] = [
  ratioGoal(PG, PEER, 'runsync_c50_rps', 'min', 1.2, '/runsync c=50'),
  ratioGoal(PG, PEER, 'run_completions_per_s', 'min', 1, '/run completions'),
  diffGoal(`${PG} SSE chunk p50 − L1 p50 (ms)`, PG, 'L1', SSE, 2),
  diffGoal(`${PG3} SSE chunk p50 − L1 p50 (ms, reader and worker on different replicas)`, PG3, 'L1', SSE, 2),
  ratioGoal(PG3, PG, 'runsync_c50_cpu_ms_per_job', 'max', 1.3, '', `${PG3} ÷ ${PG} /runsync c=50 CPU per job`),
  {
    goal: `${PG3} ÷ ${PG} /runsync c=50 CPU per job, PostgreSQL backends included`,
    kind: 'max',
    limit: 1.3,
    uses: [
      [PG3, CPU],
      [PG3, DB_CPU],
      [PG, CPU],
      [PG, DB_CPU],
    ],
    values: (p) => pair(total(p, PG3), total(p, PG), (a, b) => a / b),
  },
  {
    goal: `${PG} /runsync c=1 p50 (ms)`,
    kind: 'max',
    limit: 2,
    uses: [[PG, 'runsync_c1_p50_ms']],
    values: (p) => p(PG, 'runsync_c1_p50_ms'),
  },
];
