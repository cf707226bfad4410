/** The PostgreSQL goals of issue #17, each computed per round from figures measured in that round. */
import { goal, pair, type Goal } from './report.js';

const PG = 'berth-postgres';
const PG3 = 'berth-postgres-x3';
const PEER = 'bullmq-aof-everysec';

export function postgresGoals(pick: (name: string, key: string) => number[]): Goal[] {
  const ratio = (a: string, b: string, key: string) => pair(pick(a, key), pick(b, key), (x, y) => x / y);
  const overL1 = (t: string) => pair(pick(t, 'stream_chunk_p50_ms'), pick('L1', 'stream_chunk_p50_ms'), (a, b) => a - b);
  return [
    goal(`${PG} /runsync c=50 ÷ ${PEER}`, ratio(PG, PEER, 'runsync_c50_rps'), 'min', 1),
    goal(`${PG} /run completions ÷ ${PEER}`, ratio(PG, PEER, 'run_completions_per_s'), 'min', 1),
    goal(`${PG} SSE chunk p50 − L1 p50 (ms)`, overL1(PG), 'max', 2),
    goal(`${PG3} SSE chunk p50 − L1 p50 (ms, reader and worker on different replicas)`, overL1(PG3), 'max', 2),
    goal(`${PG3} ÷ ${PG} /runsync c=50 CPU per job`, ratio(PG3, PG, 'runsync_c50_cpu_ms_per_job'), 'max', 1.3),
    goal(`${PG} /runsync c=1 p50 (ms)`, pick(PG, 'runsync_c1_p50_ms'), 'max', 2.5),
  ];
}
