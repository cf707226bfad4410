import type { JobStatus } from '@berth/protocol';
import type { Logger } from '@berth/protocol/log';
import type { Clock } from '../clock.js';
import type { OutputFileStore } from './output-files.js';
import type { ClusterBus } from '../cluster/types.js';
import type { ScalingLease } from './scaling-lease.js';
import type { JobRecord, RetentionPolicy, WebhookAttempt, WebhookDelivery } from './records.js';
import type { BatchStore } from './batch-types.js';

/**
 * Which jobs a claim may take (issue #38, the batch lane): `interactive`, jobs of no batch (queue positions below
 * `BATCH_SEQ`); `batch`, released batch jobs (from `BATCH_SEQ` up to `HELD_SEQ`). An endpoint with a batch lane
 * gives its lane workers `batch` claims and its other workers `interactive` ones.
 */
export type ClaimLane = 'interactive' | 'batch';

export type { JobRecord, RetentionPolicy, WebhookAttempt, WebhookDelivery } from './records.js';

/** Result of a terminal transition requested by a worker or a sweep. */
export type FinishPatch =
  | { status: 'COMPLETED'; output: unknown }
  | { status: 'FAILED'; error: string }
  | { status: 'TIMED_OUT'; error: string };

export interface EndpointCounts {
  completed: number;
  failed: number;
  inProgress: number;
  inQueue: number;
  retried: number;
}

/** Jobs whose deadlines have passed, as found by one sweep. */
export interface DueJobs {
  /** ttl elapsed (any state). */
  expired: JobRecord[];
  /** executionTimeout elapsed (IN_PROGRESS). */
  timedOut: JobRecord[];
  /**
   * Retention elapsed (terminal): only the id and retention are read from these (a store may return just those:
   * PostgreSQL does, since a sweep reads up to 2,048 at a time).
   */
  retained: Pick<JobRecord, 'id' | 'retainUntil'>[];
  /** Worker lease elapsed (IN_PROGRESS, worker gone). */
  leaseExpired: JobRecord[];
}

/** One line a handler logged while running a job (forwarded by the worker runtime, `GET /v2/<ep>/logs/<id>`). */
export interface JobLogLine {
  /** Epoch ms the handler logged it (worker clock). */
  at: number;
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  workerId: string;
  /** The attempt that logged it. */
  attempt: number;
  /** Structured fields of the log call, if any. */
  fields?: Record<string, unknown>;
}

/** A job's log as stored: at most `JOB_LOG_MAX_LINES` lines (the first ones), and how many more were dropped. */
export interface JobLog {
  lines: JobLogLine[];
  dropped: number;
}

/** Lines kept per job; later lines are counted in `JobLog.dropped`, not stored. */
export const JOB_LOG_MAX_LINES = 1000;

/** What `Store.requeue` needs besides the job id. */
export interface RequeueOptions {
  /** The running attempt: a requeue of any other attempt (or of a job not running) changes nothing. */
  attempt: number;
  /** Now (epoch ms): the failed job's finish time when it is not queued again. */
  now: number;
  /** The attempt from which a lost job fails instead of going back to the queue (`attempt >= maxAttempts`). */
  maxAttempts: number;
  /** The failed job's `error`. */
  failError: string;
  /** How long the failed job is kept. */
  retention: RetentionPolicy;
}

/** Chunks read by position (`Store.readStream`). */
export interface StreamSlice {
  /** The job's current attempt (a requeued job's stream starts again at 0). */
  attempt: number;
  /** Index of the first chunk of `chunks` in the attempt's stream. */
  from: number;
  chunks: unknown[];
}

/**
 * The store is the source of truth. Every state change is one conditional write: it names the state (and, for
 * worker-driven changes, the attempt) it expects, and does nothing when the job is no longer there, so cancel,
 * completion, timeouts and requeues cannot race. Methods return the record after the change, or `undefined`
 * when the condition did not hold. Implementations: memory (now), SQLite and PostgreSQL (durable). A store that
 * cannot be reached throws `StoreUnavailableError` (clients get 503 and retry; errors.ts).
 *
 * Records are snapshots: a store never changes a record after handing it out (or after `insert` took it), and
 * callers never change a record they got from a store or handed to `insert`, so a store may share them instead
 * of copying (the memory store copies on write only).
 */
export interface Store {
  /**
   * True when a write is visible to this process's next operations as soon as it is issued, and operations of
   * one event-loop turn share one commit (SQLite's group commit): a reader woken while the write is issued
   * joins its commit. Otherwise (undefined) readers are woken after the write resolves.
   */
  readonly sharesTurnCommit?: boolean;
  /**
   * Stores that several control-plane replicas can share offer the channel between those replicas here
   * (PostgreSQL: LISTEN/NOTIFY). `createServer` uses it unless its `cluster` option says otherwise.
   */
  clusterBus?(): ClusterBus;
  /**
   * Stores that several replicas can share offer the scaling lease here (PostgreSQL: an advisory lock), so that
   * one replica alone starts and stops workers (`berth serve --scale`). `name`: the scaler's name (replicas of
   * one deployment use the same). Without it, the process scales alone.
   */
  scalingLease?(name: string): ScalingLease;
  /**
   * The folder of the store's blob files: inputs and outputs of big jobs streamed to disk and kept there, the job
   * row holding a reference (`blobs/`, issue #35). Undefined: big values are kept inline in the store.
   */
  readonly blobDir?: string | undefined;
  /** `full`: blob files are fsynced before the job that refers to them commits (the store's durability level). */
  readonly durability?: 'normal' | 'full';
  /** Batch Jobs (`store/batch-types.ts`): every store has them; a store without answers 404 on `/batch` routes. */
  readonly batches?: BatchStore;
  /** Stores a new IN_QUEUE job. Resolves only once the job is durable. An id already stored: `DuplicateJobError`. */
  insert(job: JobRecord): Promise<void>;
  /**
   * The job. `input: false`: the caller does not need its input (a wait, a status answer), and a store may leave
   * a big one where it is: the record then holds an `UnreadJson` (core/raw-json.ts), which throws if read.
   */
  get(id: string, options?: { input?: boolean }): Promise<JobRecord | undefined>;
  /**
   * Takes the oldest IN_QUEUE job of the endpoint: IN_PROGRESS, attempt + 1, executionDeadline set. `lane`: of
   * that lane only (`ClaimLane`); without, interactive jobs first, then released batch jobs.
   */
  claim(endpointId: string, workerId: string, now: number, lane?: ClaimLane): Promise<JobRecord | undefined>;
  /** How many released batch jobs of the endpoint are queued: the batch lane's backlog (its scaler looks at it). */
  batchBacklog(endpointId: string): Promise<number>;
  /**
   * True when the endpoint surely has no IN_QUEUE job now, from counts this process keeps (its writes included
   * as soon as they are issued); false when it may have one. The dispatcher skips a claim that would find
   * nothing. Stores without such counts leave it out: every claim then asks the store.
   */
  surelyEmpty?(endpointId: string): boolean;
  /** IN_PROGRESS with this attempt -> COMPLETED / FAILED / TIMED_OUT; sets retention. */
  finish(
    id: string,
    attempt: number,
    patch: FinishPatch,
    now: number,
    retention: RetentionPolicy,
  ): Promise<JobRecord | undefined>;
  /** IN_QUEUE or IN_PROGRESS -> CANCELLED. Returns the record before and after, or undefined when not cancellable. */
  cancel(
    id: string,
    now: number,
    retention: RetentionPolicy,
  ): Promise<{ before: JobRecord; after: JobRecord } | undefined>;
  /** FAILED or TIMED_OUT -> IN_QUEUE with output and error cleared and retries + 1. */
  retry(id: string, now: number): Promise<JobRecord | undefined>;
  /**
   * IN_PROGRESS with `o.attempt` goes back to IN_QUEUE (retries + 1), or to FAILED with `o.failError` when the
   * attempt has reached `o.maxAttempts`. Example: `store.requeue(job.id, { attempt: job.attempt, now, maxAttempts: 3,
   * failError: 'worker lost', retention })`.
   */
  requeue(id: string, o: RequeueOptions): Promise<JobRecord | undefined>;
  /** Latest progress of the current attempt. */
  setProgress(id: string, attempt: number, progress: unknown): Promise<boolean>;
  /** Appends stream chunks of the current attempt; `seq` is the index of the first; duplicates are skipped. */
  appendStream(id: string, attempt: number, seq: number, chunks: unknown[]): Promise<number>;
  /** Returns the chunks not yet delivered to any reader and marks them delivered. */
  takeStream(id: string): Promise<unknown[]>;
  /**
   * The current attempt's chunks from index `from` on, without taking them (a resumable reader: SSE with
   * `Last-Event-ID`, which keeps its own position). The answer's `from` is where its chunks start: later than asked
   * when a taking reader already took (and dropped) the earlier ones. `undefined`: no such job.
   */
  readStream(id: string, from: number): Promise<StreamSlice | undefined>;
  /**
   * Optional: marks the chunks `[from, to)` of `attempt` delivered if the job is still at that attempt, every
   * chunk before `from` was delivered and none after (no other reader took them). A reader woken with the chunks themselves (`ChunkData` of a `chunk` event) then
   * delivers them without reading them back; false: it calls `takeStream`.
   */
  claimStream?(id: string, attempt: number, from: number, to: number): Promise<boolean>;
  /**
   * Optional, for stores that commit some writes asynchronously (PostgreSQL: /runsync inserts, claims, stream
   * chunks): makes every write so far durable. Called before a /runsync job is answered while not terminal.
   */
  flush?(): Promise<void>;
  /**
   * Optional: a file store for worker outputs shared by every process using this store (PostgreSQL: every
   * replica serves every output URL). Without it, output files go to the control plane's folder.
   */
  outputFiles?(o: { ttlMs: number; clock: Clock; logger: Logger }): OutputFileStore;
  /** Sets or clears (null) the disconnected-worker lease of a running attempt. */
  setLease(id: string, attempt: number, until: number | null): Promise<boolean>;
  /** IN_PROGRESS jobs held by a worker. */
  runningOn(workerId: string): Promise<JobRecord[]>;
  /** Sets the ttl deadline. */
  setExpiry(id: string, expiresAt: number): Promise<boolean>;
  /** Removes the endpoint's IN_QUEUE jobs; returns their ids. */
  purgeQueue(endpointId: string): Promise<string[]>;
  /**
   * Removes a job and its stream. With `cond`, only when the named deadline still has that value (a sweep deletes
   * what it found due, not a job a retry or a new ttl has changed since).
   */
  delete(id: string, cond?: DeleteCondition): Promise<boolean>;
  /**
   * Optional: deletes the retained jobs given, each only while its `retain_until` still has that value (as
   * `delete` with `{ retainUntil }`), in one transaction; answers the ids deleted. The sweep uses it for its
   * slices of due retention (PostgreSQL: one statement per table instead of a transaction per job).
   */
  deleteRetained?(jobs: readonly { id: string; retainUntil: number }[]): Promise<string[]>;
  /** Jobs with a deadline at or before `now` (at most `limit` of each kind). */
  due(now: number, limit: number): Promise<DueJobs>;
  counts(endpointId: string): Promise<EndpointCounts>;
  queueDepth(endpointId: string): Promise<number>;
  /**
   * How many IN_QUEUE jobs of its endpoint are ahead of an IN_QUEUE job (0: it is the next one claimed), counted up
   * to `cap`; `undefined` when the job is not queued. PostgreSQL's answer is approximate (`postgres/queue-position.ts`).
   */
  queuePosition?(id: string, cap: number): Promise<number | undefined>;
  /**
   * A page of the endpoint's jobs, newest `createdAt` first (ties: newest id first), as `recent` orders them: those
   * strictly after `q.after` in that order, of the states in `q.statuses` (all when absent), at most `q.limit`.
   */
  listJobs?(endpointId: string, q: JobListQuery): Promise<JobRecord[]>;
  /*
   * Webhook outbox. The store itself writes a `WebhookDelivery` (see `newWebhookDelivery` in
   * `webhooks/delivery.ts`) inside every terminal transition of a job that has a `webhook` (finish, cancel,
   * requeue to FAILED, and `insert` of a job that is already terminal, such as a refused model input), in the
   * same transaction, so a committed terminal state always has its pending delivery.
   * Deleting a job drops its finished deliveries; pending ones stay until they finish.
   */
  /**
   * Deliveries whose `nextAttemptAt` <= `now`, earliest first, at most `limit`; their `nextAttemptAt` becomes
   * `leaseUntil` in the same write, so no other sender (or later poll) takes them while the attempt runs. A sender
   * that dies mid-attempt leaves the delivery to be retried after the lease.
   */
  claimWebhooks(now: number, limit: number, leaseUntil: number): Promise<WebhookDelivery[]>;
  /**
   * Stores a delivery of a non-terminal event (`start`, `progress`, `output`: `webhooks/event-webhooks.ts`), due
   * at its `nextAttemptAt`; an id already stored is left as it is. Deleting its job treats it like the others.
   */
  enqueueWebhook(d: WebhookDelivery): Promise<void>;
  /**
   * Appends an attempt and sets when the next is due; `null` ends the delivery (acknowledged or out of attempts),
   * and an ended delivery whose job is already deleted is dropped. False when there is no such delivery.
   */
  recordWebhookAttempt(deliveryId: string, attempt: WebhookAttempt, nextAttemptAt: number | null): Promise<boolean>;
  /** Every delivery of a job still held, oldest first (the debugging view). */
  webhookDeliveries(jobId: string): Promise<WebhookDelivery[]>;
  /**
   * Appends log lines to an existing job (any state): the first `JOB_LOG_MAX_LINES` are kept, the rest counted as
   * dropped. Returns how many were stored; 0 when there is no such job. Deleting the job deletes its log.
   */
  appendLogs(id: string, lines: JobLogLine[]): Promise<number>;
  /** The job's log, oldest line first; `undefined` when there is no such job. */
  logs(id: string): Promise<JobLog | undefined>;
  /** The endpoint's most recent jobs, newest `createdAt` first (ties: newest id first), at most `limit`. */
  recent(endpointId: string, limit: number): Promise<JobRecord[]>;
  /**
   * After a restart: every IN_PROGRESS job without a lease gets `leaseUntil`, so workers that reconnect within the
   * grace period can finish it and the rest are requeued by the lease sweep. Returns what the store holds.
   */
  recover(leaseUntil: number): Promise<RecoveryReport>;
  /** Commits what is pending and closes; later calls fail. */
  close(): Promise<void>;
}

/** What `Store.listJobs` reads. */
export interface JobListQuery {
  limit: number;
  /** The last job of the previous page: this page starts after it. */
  after?: { createdAt: number; id: string };
  statuses?: readonly JobStatus[];
}

export interface DeleteCondition {
  expiresAt?: number;
  retainUntil?: number;
}

export interface RecoveryReport {
  /** IN_QUEUE jobs found. */
  queued: number;
  /** IN_PROGRESS jobs found (now leased for the grace period). */
  running: number;
  /** Endpoints that have jobs (served again at once, before their workers reconnect). */
  endpoints: string[];
}
