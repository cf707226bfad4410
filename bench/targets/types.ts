/** What a bench target is: one row of the results table. Add a target by adding a `Target` to ./index.ts. */
import type { Proc } from '../lib/proc.js';

/** The workloads (see ../workloads/). A target lists the ones it supports; the others print `n/a`. */
export type Workload = 'runsync' | 'run' | 'status' | 'fill' | 'stream' | 'big';

/** The two endpoints every target serves: `echo` (answers with its input) and `stream` (a generator). */
export type EndpointName = 'echo' | 'stream';

export interface Target {
  /** Row name in the table and key in the JSON, e.g. `berth-sqlite-normal`. */
  name: string;
  /** What it is, one line (printed under the table). */
  description: string;
  workloads: readonly Workload[];
  /**
   * The most jobs the fill queues on this target, when its `/run` is too slow for the preset's fill to end in
   * minutes (pg-boss, graphile-worker). Its fill figures are per job, and the JSON's `fill_jobs` says how many.
   */
  maxFill?: number;
  /** Why this target cannot run here (e.g. a missing binary), or undefined when it can. Optional. */
  unavailable?: () => Promise<string | undefined>;
  /** Starts the control plane (no worker yet), fresh state, in `dir` (a new empty temp folder). */
  start(dir: string): Promise<Running>;
}

export interface Running {
  /** ms from spawning the control plane to it answering (for Berth: the `berth serve` ready banner). */
  readyMs: number;
  /** `http://127.0.0.1:<port>/v2/<endpoint>`: the RunPod-style routes /runsync /run /status/<id> /stream/<id> /health. */
  base(endpoint: EndpointName | (string & {})): string;
  /** Headers every request carries (API key). */
  headers: Record<string, string>;
  /** Processes that count as the server side (CPU per job, RSS): control plane, store (e.g. redis). */
  serverProcs(): Proc[];
  /**
   * CPU time (ms) so far of the database server's processes serving this target, when they are not among
   * `serverProcs` (PostgreSQL's backends): read before and after a window, like `serverProcs`' CPU. Optional.
   */
  dbCpuMs?(): Promise<number>;
  /** Heap used by the control plane after a full GC, bytes (NaN if it cannot be probed). */
  heapUsed(): Promise<number>;
  /** Bytes the store holds on disk (NaN for in-memory stores). */
  storeBytes(): Promise<number>;
  /**
   * Spawns a worker process for `endpoint` (same no-op logic everywhere, concurrency 64), held: it connects only
   * when `go()` is called, which resolves once the control plane sees it.
   */
  startWorker(endpoint: EndpointName): Promise<Worker>;
  /** Jobs of `endpoint` COMPLETED so far. */
  completed(endpoint: EndpointName): Promise<number>;
  /** Stops every process it started. */
  stop(): Promise<void>;
}

export interface Worker {
  proc: Proc;
  go(): Promise<void>;
  stop(): Promise<void>;
}

export const WORKER_CONCURRENCY = 64;
