import type { BatchStatus } from '@berth/protocol';
import type { JobRecord, RetentionPolicy, WebhookDelivery } from './records.js';

export type { BatchStatus };

/** One batch as the store keeps it. Times are epoch ms. */
export interface BatchRecord {
  id: string;
  endpointId: string;
  status: BatchStatus;
  name?: string;
  /** Where the terminal notification goes (signed like the jobs' webhooks). */
  webhook?: string;
  createdAt: number;
  finalizedAt?: number;
  /**
   * When the batch ended: every request of a FINALIZED batch ended, or it was cancelled (its queued requests are
   * cancelled by then), or it failed. The terminal webhook is queued in the same write. Open batches have none.
   */
  finishedAt?: number;
  /** Requests added minus requests removed (counted in the same write as the jobs). */
  total: number;
}

/** A batch's requests by state; `total - (sum of these)` were deleted (ttl) before the read. */
export interface BatchCounts {
  /** Queued, held ones of a DRAFT batch included. */
  queued: number;
  inProgress: number;
  completed: number;
  /** FAILED and TIMED_OUT. */
  failed: number;
  cancelled: number;
}

/** The limits a store checks in the write that would pass them (so replicas sharing a store cannot overshoot). */
export interface BatchLimits {
  /** Queued batch requests per endpoint (held ones included). RunPod: 50,000. */
  maxQueued: number;
  /** Open (not finished) batches per endpoint. */
  maxOpen: number;
}

/** What a batch page reads: ids after `after` (id order), skipping `offset` of them, at most `limit`. */
export interface BatchJobsQuery {
  limit: number;
  after?: string;
  offset?: number;
}

/**
 * Batches, in every store (memory, SQLite, PostgreSQL). Batch requests are jobs with `batchId`: inserted held (not
 * claimable, not counted as queued by `counts`, `queueDepth` or `surelyEmpty`) while the batch is a DRAFT, and
 * queued behind every interactive job of their endpoint once released (`releaseBatch`). Every method works on at
 * most a chunk of jobs, so a batch of 100,000 requests is never read or written whole.
 */
export interface BatchStore {
  /** Stores a new DRAFT batch and its first requests. Limits passed: `BatchLimitError`. */
  createBatch(batch: BatchRecord, jobs: JobRecord[], limits: BatchLimits): Promise<void>;
  getBatch(id: string): Promise<BatchRecord | undefined>;
  /** The endpoint's batches, newest first (ties: newest id first), after `after` in that order, at most `limit`. */
  listBatches(endpointId: string, limit: number, after?: { createdAt: number; id: string }): Promise<BatchRecord[]>;
  /** Sets or clears the name; undefined when there is no such batch. */
  renameBatch(id: string, name: string | undefined): Promise<BatchRecord | undefined>;
  /**
   * Adds held jobs to a DRAFT batch. `not_draft`: the batch is not a DRAFT (nothing added); undefined: no such
   * batch; limits passed: `BatchLimitError`.
   */
  addToBatch(id: string, jobs: JobRecord[], limits: BatchLimits): Promise<BatchRecord | 'not_draft' | undefined>;
  /** Deletes a held job of a DRAFT batch. `not_draft`, or false when the batch holds no such job. */
  removeFromBatch(id: string, jobId: string): Promise<boolean | 'not_draft'>;
  /** DRAFT -> FINALIZED (its jobs are still held: `releaseBatch` queues them). Undefined: not a DRAFT. */
  finalizeBatch(id: string, now: number): Promise<BatchRecord | undefined>;
  /** Queues up to `limit` held jobs of a FINALIZED batch, oldest first; returns how many. */
  releaseBatch(id: string, limit: number): Promise<number>;
  /** DRAFT or FINALIZED, not finished -> CANCELLED (its jobs untouched: `cancelBatchJobs`). Undefined otherwise. */
  cancelBatch(id: string): Promise<BatchRecord | undefined>;
  /** Cancels up to `limit` queued (or held) jobs of the batch; returns their ids. Running ones are left alone. */
  cancelBatchJobs(id: string, now: number, retention: RetentionPolicy, limit: number): Promise<string[]>;
  batchCounts(id: string): Promise<BatchCounts>;
  /** A page of the batch's jobs in id order. */
  batchJobs(id: string, q: BatchJobsQuery): Promise<JobRecord[]>;
  /** Up to `limit` IN_PROGRESS jobs of the batch (a cancel stops them). */
  runningBatchJobs(id: string, limit: number): Promise<JobRecord[]>;
  /** True while a job of the batch is queued (held or not) or running. */
  batchLive(id: string): Promise<boolean>;
  /**
   * Ends the batch once: sets `finishedAt` (and `status`, FAILED when requests were lost) if it has none, and
   * stores `delivery` (the terminal webhook) in the same write. Undefined when it had already ended.
   */
  endBatch(
    id: string,
    now: number,
    status: BatchStatus,
    delivery: WebhookDelivery | undefined,
  ): Promise<BatchRecord | undefined>;
  /** FINALIZED or CANCELLED batches not ended yet (every endpoint; at most `limit`): the batch sweep's work. */
  unendedBatches(limit: number): Promise<BatchRecord[]>;
  /** Batches that ended at or before `before` (every endpoint; at most `limit`): the retention sweep's work. */
  endedBatches(before: number, limit: number): Promise<BatchRecord[]>;
  /** Deletes an ended batch and its jobs, up to `limit` jobs a call; true once the batch row itself is gone. */
  deleteBatch(id: string, limit: number): Promise<boolean>;
}

/** A limit of `BatchLimits` would be passed: the write did nothing. */
export class BatchLimitError extends Error {
  constructor(
    readonly limit: keyof BatchLimits,
    readonly value: number,
  ) {
    super(limit === 'maxQueued' ? `${value} batch requests queued` : `${value} open batches`);
    this.name = 'BatchLimitError';
  }
}

/**
 * Queue positions of batch jobs in the SQL stores: interactive jobs take positions from 1 up (a sequence), released
 * batch jobs from `BATCH_SEQ`, held ones from `HELD_SEQ`. A claim takes the lowest position below `HELD_SEQ`, so
 * batch jobs go after every interactive job of their endpoint without a second index or a change to the claim's
 * plan. 2^51 interactive jobs are never reached; both fit a safe integer and an int8.
 */
export const BATCH_SEQ = 2 ** 51;
export const HELD_SEQ = 2 ** 52;
