/** The quick (< 2 min) and full presets; every size can be overridden on the command line. */
import type { BenchConfig } from './workloads/types.js';

export const QUICK: BenchConfig = { rounds: 2, warmup: 200, c1Calls: 300, c50Seconds: 1.5, runJobs: 1000, statusSeconds: 1, fillJobs: 10_000, streamChunks: 1000, concurrency: 50 };
export const FULL: BenchConfig = { rounds: 3, warmup: 500, c1Calls: 2000, c50Seconds: 5, runJobs: 5000, statusSeconds: 3, fillJobs: 100_000, streamChunks: 1000, concurrency: 50 };
/** For the smoke test: exercises every path, times nothing that matters. */
export const TINY: BenchConfig = { rounds: 1, warmup: 5, c1Calls: 10, c50Seconds: 0.2, runJobs: 50, statusSeconds: 0.2, fillJobs: 100, streamChunks: 20, concurrency: 10 };
