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
}
