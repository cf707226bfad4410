/**
 * The quick (meant to stay within 5 min) and full presets; every size can be overridden on the command line. The
 * quick preset runs every row once with short windows and no fill, then two more rounds of only the targets and
 * workloads the goal table reads (`lib/plan.ts`), with 2.5 s windows: the goals get three samples each and a spread;
 * the fill and the big payloads, the slow ones whose goals sit far from their targets, get two, and the warm-up
 * before each row's figures is 0.5 s at c=50 (issue #40).
 */
import type { BenchConfig } from './workloads/types.js';

export const QUICK: BenchConfig = {
  rounds: 1,
  goalRounds: 3,
  warmup: 50,
  warmupSeconds: 0.5,
  c1Calls: 150,
  goalC1Calls: 400,
  c50Seconds: 1,
  goalSeconds: 2.5,
  runJobs: 300,
  statusSeconds: 0.5,
  fillJobs: 20_000,
  fillRounds: 0,
  goalFillRounds: 2,
  goalBigRounds: 2,
  streamChunks: 300,
  burstChunks: 10_000,
  concurrency: 50,
  bigOne: 1,
};
export const FULL: BenchConfig = {
  rounds: 3,
  warmup: 300,
  warmupSeconds: 2,
  c1Calls: 1000,
  c50Seconds: 4,
  runJobs: 3000,
  statusSeconds: 2,
  fillJobs: 100_000,
  fillRounds: 1,
  streamChunks: 1000,
  burstChunks: 30_000,
  concurrency: 50,
};
/** For the smoke test: exercises every path, times nothing that matters. */
export const TINY: BenchConfig = {
  rounds: 1,
  warmup: 5,
  warmupSeconds: 0,
  c1Calls: 10,
  c50Seconds: 0.2,
  runJobs: 50,
  statusSeconds: 0.2,
  fillJobs: 100,
  streamChunks: 20,
  concurrency: 10,
  // Ten 19 MiB requests per row are not a smoke test; `bench/workloads/big.ts` runs in real runs only.
  skip: ['big'],
};
