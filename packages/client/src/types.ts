/**
 * The wire shapes the client reads and sends, written as plain types (the client carries no schema library; the
 * server's zod schemas in `@berth/protocol` are the reference, docs/api.md the description).
 */

/** A job's state, as on the wire. */
export type JobStatus = 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT';

/** The states a job never leaves. */
export const TERMINAL: readonly JobStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

/** The job object of `/status`, `/runsync`, `/cancel`; `O`: the handler's output. */
export interface Job<O = unknown> {
  id: string;
  status: JobStatus;
  /** ms from submission (or retry) to a worker taking it. */
  delayTime?: number;
  /** ms from a worker taking it to the end. */
  executionTime?: number;
  /** `COMPLETED`: the handler's result (`IN_PROGRESS`: the latest progress value, if any). */
  output?: O;
  progress?: unknown;
  /** `FAILED`, `TIMED_OUT`: a message. */
  error?: string;
  retries?: number;
  workerId?: string;
  /** The job token a submit asked for with `token` (docs/job-tokens.md). */
  token?: string;
  /** Berth, `/status` of an `IN_QUEUE` job: how many queued jobs of the endpoint are ahead of it (0: next), at most 1000. */
  queuePosition?: number;
  /** Berth, `/status` of an `IN_QUEUE` job: why it is not running yet. */
  waitingFor?: WaitingFor;
  /** The batch the job belongs to (Batch Jobs, `client.endpoint(id).batches`). */
  batchId?: string;
}

/**
 * Why a queued job waits (docs/api.md, "Why a job waits"). A newer server may send a reason not listed here,
 * hence the open `string`.
 */
export type WaitingFor =
  | 'no_worker'
  | 'workers_busy'
  | 'cold_start'
  | 'image_missing'
  | 'crash_loop'
  | 'low_priority'
  | 'gpu'
  | 'workers_unhealthy'
  | 'handler_broken'
  | 'batch_draft'
  | 'batch_lane'
  | (string & {});

/** The answer of `/run` and `/retry`. */
export interface Queued {
  id: string;
  status: JobStatus;
  /** The job token a submit asked for with `token`. */
  token?: string | undefined;
}

/** The events a job's webhook may be sent (docs/webhooks.md). */
export type WebhookEvent = 'start' | 'progress' | 'output' | 'completed';

/** What a job token may do and how long it lives (docs/job-tokens.md). */
export interface TokenRequest {
  /** 10..86400; default 900. */
  ttlSeconds?: number;
  /** `true`: the token may also cancel the job. Default `false`. */
  cancel?: boolean;
}

/** The answer of `/token/<id>`. */
export interface JobToken {
  id: string;
  token: string;
}

/** `/health`. */
export interface Health {
  jobs: { completed: number; failed: number; inProgress: number; inQueue: number; retried: number };
  workers: {
    idle: number;
    initializing?: number;
    ready: number;
    running: number;
    throttled: number;
    unhealthy: number;
  };
  /** Berth, while jobs are queued: why they wait. */
  waitingFor?: WaitingFor | undefined;
}

/** One line of `/logs/<id>`. */
export interface LogLine {
  time: string | number;
  level: string;
  message: string;
  workerId?: string;
  attempt?: number;
  fields?: Record<string, unknown>;
}

/** `/logs/<id>`: what the handler logged, every attempt, oldest first. */
export interface JobLogs {
  id: string;
  logs: LogLine[];
  dropped: number;
}

/** `/purge-queue`. */
export interface Purged {
  removed: number;
  status: string;
}

/** `policy` of a submit (docs/api.md). */
export interface JobPolicy {
  /** ms from a worker taking the job (5 s..7 days, default 10 min). */
  executionTimeout?: number;
  /** ms of the job's whole lifespan (10 s..7 days, default 24 h). */
  ttl?: number;
  lowPriority?: boolean;
}
