import type { Clock } from '../clock.js';
import type { Logger } from '@berth/protocol/log';
import type { ResolvedServerOptions } from '../options.js';
import type { JobRecord, Store } from '../store/types.js';
import type { WorkerRegistry } from '../workers/worker-registry.js';
import type { BatchStats } from './batch-stats.js';
import type { JobEvents } from './job-events.js';
import type { JobTracer } from './job-tracer.js';
import type { EventWebhooks } from '../webhooks/event-webhooks.js';
import type { WorkerEvents } from './worker-events.js';
import type { RawJson } from '../core/raw-json.js';

/** What jobs need of the blob files of big values (implemented by `JobBlobs`, blobs/job-blobs.ts). */
export interface JobValueFiles {
  /** Before `job` is inserted: a streamed input still in its temp file gets its job's name. */
  bind(job: JobRecord): Promise<void>;
  /** A job that was not stored after `bind`: its input file goes. */
  unbind(job: JobRecord): Promise<void>;
  /** The output blob a worker's `job.complete` names, if it is one of `jobId`'s. */
  output(jobId: string, name: string): Promise<RawJson | undefined>;
}

/** What the job machinery shares: the store, wake-ups, connected workers, time and logs. */
export interface CoreContext {
  store: Store;
  events: JobEvents;
  registry: WorkerRegistry;
  clock: Clock;
  logger: Logger;
  options: ResolvedServerOptions;
  /** `server.workers`' events: a worker connected, a job finished (a scaler listens). */
  workerEvents: WorkerEvents;
  /**
   * Called once for every job that reaches a terminal state. The webhook sender listens here to deliver at once;
   * the outbox row itself is written by the store inside the terminal transition (see `Store.claimWebhooks`).
   */
  onTerminal: ((job: JobRecord) => void)[];
  /** Batches started by batch handlers, as workers report them (/health, /metrics). */
  batches: BatchStats;
  /** Job spans (OpenTelemetry); undefined with tracing off, and then nothing is spent on it. */
  tracer?: JobTracer | undefined;
  /** A worker's first job had been queued before the worker connected: the job waited for it to start (metrics). */
  onColdStart?: (endpointId: string) => void;
  /** The `start`, `progress` and `output` webhooks of jobs that asked for them (`webhookEvents`). */
  eventWebhooks?: EventWebhooks;
  /** Big inputs and outputs as blob files (issue #35; `blobs/job-blobs.ts`): what the job machinery needs of them. */
  blobs: JobValueFiles;
  /** Asks for a sweep at epoch-ms `t` (a deadline was just set). */
  wakeAt(t: number): void;
}
