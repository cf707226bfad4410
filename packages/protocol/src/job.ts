import { z } from 'zod';
import { LIMITS } from './limits.js';

/** Job states, upper-case as on the wire. */
export const JOB_STATUSES = ['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'] as const;
export const JobStatus = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof JobStatus>;

export const TERMINAL_STATUSES: ReadonlySet<JobStatus> = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);
export function isTerminal(status: JobStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}

const ms = (min: number, max: number, name: string) =>
  z
    .number({ error: `must be a number of milliseconds (${name})` })
    .int('must be a whole number of milliseconds')
    .min(min, `must be at least ${min} ms`)
    .max(max, `must be at most ${max} ms`);

/**
 * A JSON object (not an array or null), validated without copying: the handler receives exactly what the client
 * sent, including keys such as `__proto__` that a copying parser would drop, and large inputs are not re-built.
 */
export const JsonObject = z.custom<Record<string, unknown>>(
  (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  { error: 'must be a JSON object' },
);

/** `policy` of a job request. */
export const ExecutionPolicy = z.strictObject({
  executionTimeout: ms(LIMITS.executionTimeoutMin, LIMITS.executionTimeoutMax, 'policy.executionTimeout').optional(),
  ttl: ms(LIMITS.ttlMin, LIMITS.ttlMax, 'policy.ttl').optional(),
  lowPriority: z.boolean().optional(),
});
export type ExecutionPolicy = z.infer<typeof ExecutionPolicy>;

/** `s3Config` of a job request: handed to the worker, never echoed. */
export const S3Config = z.strictObject({
  accessId: z.string().min(1),
  accessSecret: z.string().min(1),
  bucketName: z.string().min(1),
  endpointUrl: z.string().url(),
  objectPath: z.string().optional(),
});
export type S3Config = z.infer<typeof S3Config>;

const httpUrl = z
  .string()
  .max(2048)
  .refine((s) => {
    // No whitespace or control characters (`new URL` would silently drop some): stores keep the URL as given.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    if (/[\s\u0000-\u001f\u007f]/.test(s)) return false;
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'webhook must be an http or https URL');

/** The events a job's webhook can be sent for (`webhookEvents`); the default is `["completed"]` (RunPod's). */
export const WEBHOOK_EVENTS = ['start', 'progress', 'output', 'completed'] as const;
export const WebhookEvent = z.enum(WEBHOOK_EVENTS);
export type WebhookEvent = z.infer<typeof WebhookEvent>;

/** `webhookEvents` of a job request: one to four distinct events. */
export const WebhookEvents = z
  .array(WebhookEvent)
  .min(1, 'must name at least one event')
  .max(WEBHOOK_EVENTS.length)
  .refine((a) => new Set(a).size === a.length, 'must not name an event twice');

/**
 * `token` of a job request: asks for a job token (docs/job-tokens.md), a short-lived credential for this one job
 * that a browser may hold: `/status`, `/status-sync`, `/stream`, `/logs`, and `/cancel` when `cancel` is true.
 */
export const JobTokenRequest = z.strictObject({
  ttlSeconds: z
    .number({ error: 'must be a number of seconds (token.ttlSeconds)' })
    .int('must be a whole number of seconds')
    .min(LIMITS.jobTokenTtlMinSeconds, `must be at least ${LIMITS.jobTokenTtlMinSeconds} s`)
    .max(LIMITS.jobTokenTtlMaxSeconds, `must be at most ${LIMITS.jobTokenTtlMaxSeconds} s`)
    .optional(),
  cancel: z.boolean().optional(),
});
export type JobTokenRequest = z.infer<typeof JobTokenRequest>;

/**
 * Body of POST /run and /runsync. Unknown top-level keys are ignored (clients send e.g. `webhookV2`);
 * known keys are validated strictly.
 */
export const JobRequest = z.looseObject({
  input: JsonObject,
  webhook: httpUrl.optional(),
  policy: ExecutionPolicy.optional(),
  s3Config: S3Config.optional(),
  /** Events the webhook is sent for. Default `["completed"]`. Needs `webhook`. */
  webhookEvents: WebhookEvents.optional(),
  /** Ask for a job token in the answer (`token`). */
  token: JobTokenRequest.optional(),
});
export type JobRequest = z.infer<typeof JobRequest>;

/** The job object of /runsync, /status, /status-sync, /cancel and the webhook body. */
export const JobObject = z.object({
  id: z.string(),
  status: JobStatus,
  delayTime: z.number().int().optional(),
  executionTime: z.number().int().optional(),
  output: z.unknown().optional(),
  progress: z.unknown().optional(),
  error: z.string().optional(),
  retries: z.number().int().optional(),
  workerId: z.string().optional(),
  input: JsonObject.optional(),
  webhook: z.string().optional(),
  /** The job token asked for with `token` (runsync answers only). */
  token: z.string().optional(),
  /** Berth, `/status` of an IN_QUEUE job: queued jobs of the endpoint ahead of it (0: next), at most 1000. */
  queuePosition: z.number().int().min(0).optional(),
  /** Berth, `/status` of an IN_QUEUE job: why it waits (`no_worker`, `workers_busy`, `cold_start`, ...: docs/api.md). */
  waitingFor: z.string().optional(),
  /** The batch the job belongs to (`POST /v2/<ep>/batch`, RunPod's Batch Jobs). */
  batchId: z.string().optional(),
});
export type JobObject = z.infer<typeof JobObject>;

/** Reply of POST /run and /retry. */
export interface RunReply {
  id: string;
  status: 'IN_QUEUE';
  /** A job token, when the request asked for one with `token` (docs/job-tokens.md). */
  token?: string | undefined;
}

/** Reply of /stream: only chunks not yet delivered to any reader. */
export interface StreamReply {
  id: string;
  status: JobStatus;
  stream: { output: unknown }[];
  error?: string;
}

/** Reply of POST /purge-queue. */
export interface PurgeReply {
  removed: number;
  status: 'completed';
}

/** Reply of GET /health. */
export interface HealthReply {
  jobs: { completed: number; failed: number; inProgress: number; inQueue: number; retried: number };
  workers: { idle: number; initializing: number; ready: number; running: number; throttled: number; unhealthy: number };
  /**
   * Present once a batch handler served the endpoint here: the largest `batch.maxSize` its connected workers
   * announce (0 when none is connected), and the batches they started since this process started.
   */
  batch?: { maxSize: number; batches: number; jobs: number; meanSize: number } | undefined;
  /** Berth, while jobs are queued: why they wait (the `waitingFor` of an interactive job's `/status`; docs/api.md). */
  waitingFor?: string | undefined;
  /**
   * Berth, when the scaler places GPUs (`gpusPerWorker`): which worker holds which devices, one entry per worker
   * holding some (a worker starting holds its devices already; they are freed once it has stopped).
   */
  gpus?: { workerId: string; devices: string[] }[] | undefined;
}
