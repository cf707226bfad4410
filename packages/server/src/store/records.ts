import type { JobStatus, S3Config, WebhookEvent } from '@berth/protocol';

/** One job as the store keeps it. Times are epoch ms. */
export interface JobRecord {
  id: string;
  endpointId: string;
  status: JobStatus;
  input: Record<string, unknown>;
  webhook?: string;
  /** Events the webhook is sent for (`webhookEvents` of the request); absent: `["completed"]`. */
  webhookEvents?: WebhookEvent[];
  s3Config?: S3Config;
  executionTimeout: number;
  lowPriority: boolean;
  /** Submitted through /runsync (shorter retention). */
  sync: boolean;
  /** Number of times a worker took the job; the current attempt while IN_PROGRESS. */
  attempt: number;
  /** How many times the job went back to the queue (retry or requeue). */
  retries: number;
  workerId?: string;
  output?: unknown;
  progress?: unknown;
  error?: string;
  createdAt: number;
  /** Submit or retry time: delayTime counts from here. */
  queuedAt: number;
  startedAt?: number;
  finishedAt?: number;
  /** ttl deadline: the job is deleted at this time whatever its state. */
  expiresAt: number;
  /** executionTimeout deadline of the running attempt. */
  executionDeadline?: number;
  /** Retention deadline of a terminal job. */
  retainUntil?: number;
  /** Set while the job's worker is disconnected: past it, the job is requeued. */
  leaseUntil?: number;
  /**
   * Price of a job on a priced public model, fixed at submit. `finish` stores it as `output.cost` of a COMPLETED
   * object output, in the same write, so every read and the webhook body carry it.
   */
  cost?: number;
  /**
   * The batch the job belongs to (`POST /v2/<ep>/batch`, `store/batch-types.ts`). A batch job is claimed after every
   * queued job without one of its endpoint, and not at all while its batch is a DRAFT (it is "held").
   */
  batchId?: string;
}

export interface RetentionPolicy {
  /** ms a terminal /run job is kept. */
  async: number;
  /** ms a terminal /runsync job is kept. */
  sync: number;
}

/** One webhook delivery attempt. */
export interface WebhookAttempt {
  /** Epoch ms the attempt started. */
  at: number;
  /** HTTP status the target answered (2xx acknowledges). */
  status?: number;
  /** Why there is no status: refused address, connection error, timeout. */
  error?: string;
  /** How long the attempt took, ms. */
  durationMs: number;
}

/**
 * A webhook delivery in the outbox: one per job per terminal transition, and one per non-terminal event the job's
 * `webhookEvents` asked for (throttled: `webhooks/event-webhooks.ts`).
 */
export interface WebhookDelivery {
  /**
   * The `webhook-id` header, the same on every attempt: `msg_<job id>_<retries>` for the terminal state,
   * `msg_<job id>_<event>_<random>` for the other events (`eventOf` reads it back).
   */
  id: string;
  jobId: string;
  endpointId: string;
  url: string;
  /** JSON text of the job object plus `input`, `webhook` and `event`, taken when the event happened. */
  body: string;
  createdAt: number;
  /** When the next attempt is due (or a running attempt's lease ends); `null` once finished. */
  nextAttemptAt: number | null;
  /** Oldest first. */
  attempts: WebhookAttempt[];
}
