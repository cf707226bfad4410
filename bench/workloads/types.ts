/** Sizes of one bench run (see ../config.ts for the quick and full presets). */
export interface BenchConfig {
  rounds: number;
  /** Warm-up /runsync calls before any timed workload. */
  warmup: number;
  /**
   * Then a /runsync closed loop at `concurrency` for this many seconds, untimed: the figures are of a server whose
   * hot paths the JIT has compiled, as in a server that has been up a while (0: none).
   */
  warmupSeconds: number;
  /** /runsync at concurrency 1: this many calls (latency p50/p99). */
  c1Calls: number;
  /** /runsync at concurrency 50: closed loop for this many seconds (throughput). */
  c50Seconds: number;
  /** /run at concurrency 50: this many jobs, then wait for all completions. */
  runJobs: number;
  /** /status at concurrency 50: closed loop for this many seconds. */
  statusSeconds: number;
  /** Jobs queued with no worker connected, then drained. */
  fillJobs: number;
  /** The fill runs in the first this-many rounds only (it is the long one). Default: every round. */
  fillRounds?: number;
  /** Chunks the paced streaming generator yields (1 ms apart). */
  streamChunks: number;
  /** Chunks of the back-to-back stream (chunks/s). Default: `streamChunks`. A burst of 1,000 lasts about 10 ms,
   *  start-up effects included: its figure swung 2x between builds that match at 30,000. */
  burstChunks?: number;
  concurrency: number;
  /** Big payloads: timed single 19 MiB /runsync calls (the fastest counts). Default 2. */
  bigOne?: number;
  /**
   * Rounds for the targets and workloads the goal table reads (`lib/plan.ts`): after `rounds` rounds of every
   * row, only those run, until this many. Default: `rounds`.
   */
  goalRounds?: number;
  /** `c50Seconds` for the targets whose `/runsync` or `/run` figures a goal reads. Default: `c50Seconds`. */
  goalSeconds?: number;
  /** `c1Calls` for the same targets. Default: `c1Calls`. */
  goalC1Calls?: number;
  /** `fillRounds` for the targets whose fill or drain a goal reads. Default: `fillRounds`. */
  goalFillRounds?: number;
  /** Rounds that run the big payloads (on the rows a goal reads them from). Default: every round. */
  goalBigRounds?: number;
  /** Workloads to leave out of this run (`--skip fill,stream`). */
  skip?: string[];
}

/** One target's figures from one round; NaN where a figure does not apply. */
export type Figures = Record<string, number>;

/** The input every echo job carries (about 50 bytes of JSON). */
export const input = (n: number) => ({ n, prompt: 'a queued job with a small input' });

/** True when `body` is the completed echo of `input(n)`. */
export function isEcho(body: any, n: number): true | string {
  if (body?.status !== 'COMPLETED') return `status ${body?.status ?? 'missing'}: ${JSON.stringify(body).slice(0, 200)}`;
  if (body.output?.n !== n || body.output?.prompt !== input(n).prompt)
    return `wrong output for n=${n}: ${JSON.stringify(body.output).slice(0, 200)}`;
  return true;
}
