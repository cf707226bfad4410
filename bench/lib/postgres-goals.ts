/** Issue #17: the PostgreSQL store keeps pace (BullMQ of the same class, SSE over L1, replicas' cost per job). */
import { diffGoal, ratioGoal, type GoalSpec } from './goal-spec.js';

const PG = 'berth-postgres';
const PG3 = 'berth-postgres-x3';
const PEER = 'bullmq-aof-everysec';
const SSE = 'stream_chunk_p50_ms';

export const POSTGRES_GOALS: GoalSpec[] = [
  ratioGoal(PG, PEER, 'runsync_c50_rps', 'min', 1, '/runsync c=50'),
  ratioGoal(PG, PEER, 'run_completions_per_s', 'min', 1, '/run completions'),
  diffGoal(`${PG} SSE chunk p50 − L1 p50 (ms)`, PG, 'L1', SSE, 2),
  diffGoal(`${PG3} SSE chunk p50 − L1 p50 (ms, reader and worker on different replicas)`, PG3, 'L1', SSE, 2),
  ratioGoal(PG3, PG, 'runsync_c50_cpu_ms_per_job', 'max', 1.3, '', `${PG3} ÷ ${PG} /runsync c=50 CPU per job`),
  {
    goal: `${PG} /runsync c=1 p50 (ms)`,
    kind: 'max',
    limit: 2.5,
    uses: [[PG, 'runsync_c1_p50_ms']],
    values: (p) => p(PG, 'runsync_c1_p50_ms'),
  },
];
