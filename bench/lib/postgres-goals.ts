/** Issue #17: the PostgreSQL store keeps pace (BullMQ of the same class, SSE over L1, replicas' cost per job). */
import { pair, type GoalSpec, type Pick } from './goals.js';

const PG = 'berth-postgres';
const PG3 = 'berth-postgres-x3';
const PEER = 'bullmq-aof-everysec';

const ratio = (p: Pick, a: string, b: string, key: string) => pair(p(a, key), p(b, key), (x, y) => x / y);
const overL1 = (p: Pick, t: string) =>
  pair(p(t, 'stream_chunk_p50_ms'), p('L1', 'stream_chunk_p50_ms'), (a, b) => a - b);

export const POSTGRES_GOALS: GoalSpec[] = [
  {
    goal: `${PG} /runsync c=50 ÷ ${PEER}`,
    kind: 'min',
    limit: 1,
    values: (p) => ratio(p, PG, PEER, 'runsync_c50_rps'),
  },
  {
    goal: `${PG} /run completions ÷ ${PEER}`,
    kind: 'min',
    limit: 1,
    values: (p) => ratio(p, PG, PEER, 'run_completions_per_s'),
  },
  { goal: `${PG} SSE chunk p50 − L1 p50 (ms)`, kind: 'max', limit: 2, values: (p) => overL1(p, PG) },
  {
    goal: `${PG3} SSE chunk p50 − L1 p50 (ms, reader and worker on different replicas)`,
    kind: 'max',
    limit: 2,
    values: (p) => overL1(p, PG3),
  },
  {
    goal: `${PG3} ÷ ${PG} /runsync c=50 CPU per job`,
    kind: 'max',
    limit: 1.3,
    values: (p) => ratio(p, PG3, PG, 'runsync_c50_cpu_ms_per_job'),
  },
  { goal: `${PG} /runsync c=1 p50 (ms)`, kind: 'max', limit: 2.5, values: (p) => p(PG, 'runsync_c1_p50_ms') },
];
