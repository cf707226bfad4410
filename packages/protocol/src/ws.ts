import { z } from 'zod';
import { JsonObject, S3Config } from './job.js';
import { WS_ERROR_CODES } from './errors.js';
import { LIMITS, WORKER_ID_RE } from './limits.js';
import { LOG_EVENT_LEVELS } from './log.js';

/**
 * The native worker protocol (docs/worker-protocol.md). Workers dial `GET /v2/_worker/ws` (WebSocket) with
 * `Authorization: Bearer <worker token>`; the first message a worker sends is `hello`. Every message is a JSON
 * object discriminated on `type`. Job messages carry the attempt number the server dispatched; the server
 * accepts results, progress and chunks only for the current attempt of a running job.
 */
export const PROTOCOL_VERSION = 1;
/** Path of the worker WebSocket. */
export const WORKER_WS_PATH = '/v2/_worker/ws';

const jobRef = { id: z.string().min(1).max(200), attempt: z.number().int().min(1) };
const workerId = z.string().regex(WORKER_ID_RE, 'workerId: 1-128 of [A-Za-z0-9._:-]');

// ---------------------------------------------------------------- worker -> server

export const HelloMessage = z.object({
  type: z.literal('hello'),
  protocol: z.number().int(),
  workerId,
  endpointId: z.string(),
  concurrency: z.number().int().min(0).max(LIMITS.workerConcurrencyMax),
  /** True when the handler streams (generator handler or return_aggregate_stream). */
  stream: z.boolean(),
  /** Jobs this worker is still running (after a reconnect): the server re-adopts those still current. */
  inflight: z.array(z.object(jobRef)).max(LIMITS.workerInflightMax).default([]),
  sdkVersion: z.string().max(64).optional(),
  /**
   * JSON Schema of the handler's input (from `start({ inputSchema })`), shown by the playground and
   * `GET /v2/_berth/catalog`. Informational: the worker validates inputs itself.
   */
  inputSchema: z.record(z.string(), z.unknown()).optional(),
  /** A batch handler (`start({ batch })`): the most jobs it takes in one call. The dispatcher assigns in groups of it. */
  batch: z.object({ maxSize: z.number().int().min(1).max(LIMITS.workerConcurrencyMax) }).optional(),
  /**
   * The worker fetches a big input by reference (`job.assign`'s `inputBlob`) and may upload a big output over
   * HTTP (`job.complete`'s `outputBlob`), when the server's `welcome` says it keeps blobs (docs/worker-protocol.md).
   */
  blobs: z.boolean().optional(),
});
/** A batch handler started a batch of `size` jobs (for `berth_batch_size` and `/health`). */
export const BatchMessage = z.object({
  type: z.literal('batch'),
  size: z.number().int().min(1).max(LIMITS.workerConcurrencyMax),
});
export const ConcurrencyMessage = z.object({
  type: z.literal('concurrency'),
  concurrency: z.number().int().min(0).max(LIMITS.workerConcurrencyMax),
});
export const ProgressMessage = z.object({ type: z.literal('job.progress'), ...jobRef, progress: z.unknown() });
export const StreamMessage = z.object({
  type: z.literal('job.stream'),
  ...jobRef,
  /** Index of the first chunk in this message within the job attempt's stream (0-based). */
  seq: z.number().int().min(0),
  chunks: z.array(z.unknown()).min(1),
});
export const CompleteMessage = z.object({
  type: z.literal('job.complete'),
  ...jobRef,
  output: z.unknown(),
  /**
   * The output was uploaded first (`POST /v2/_worker/jobs/<id>/output?attempt=<n>`, its answer's `blob`): the
   * result is that blob, and `output` is ignored.
   */
  outputBlob: z.string().max(300).optional(),
});
export const FailMessage = z.object({
  type: z.literal('job.fail'),
  ...jobRef,
  error: z.string(),
  /** The handler stopped because the server cancelled it (cancel, timeout, ttl): the result is only a release. */
  aborted: z.boolean().optional(),
});
/** Longest `message` of one forwarded log line; longer ones are cut by the worker. */
export const LOG_MESSAGE_MAX_CHARS = 8_000;
/** Lines of one `job.log` message. */
export const LOG_LINES_PER_MESSAGE = 100;
export const LogLine = z.object({
  /** Epoch ms (worker clock). */
  t: z.number(),
  level: z.enum(LOG_EVENT_LEVELS),
  msg: z.string().max(LOG_MESSAGE_MAX_CHARS),
  fields: z.record(z.string(), z.unknown()).optional(),
});
/** What a handler logged while running an attempt (`job.log.*` and `console.*` inside the handler). */
export const LogMessage = z.object({
  type: z.literal('job.log'),
  ...jobRef,
  lines: z.array(LogLine).min(1).max(LOG_LINES_PER_MESSAGE),
});
export const DrainingMessage = z.object({ type: z.literal('draining') });
export const PingMessage = z.object({ type: z.literal('ping'), t: z.number() });
export const PongMessage = z.object({ type: z.literal('pong'), t: z.number() });

export const WorkerMessage = z.discriminatedUnion('type', [
  HelloMessage,
  BatchMessage,
  ConcurrencyMessage,
  ProgressMessage,
  StreamMessage,
  CompleteMessage,
  FailMessage,
  LogMessage,
  DrainingMessage,
  PingMessage,
  PongMessage,
]);
export type LogMessage = z.infer<typeof LogMessage>;
export type LogLine = z.infer<typeof LogLine>;
export type WorkerMessage = z.infer<typeof WorkerMessage>;
export type HelloMessage = z.infer<typeof HelloMessage>;

// ---------------------------------------------------------------- server -> worker

export const WelcomeMessage = z.object({
  type: z.literal('welcome'),
  protocol: z.number().int(),
  workerId,
  /** How often each side sends `ping`; a side that hears nothing for 3 intervals drops the connection. */
  heartbeatMs: z.number().int().positive(),
  /** Jobs from `hello.inflight` that are no longer current: the worker must stop them and drop their results. */
  stale: z.array(z.object(jobRef)).default([]),
  /**
   * The server acknowledges every `job.complete` / `job.fail` with `job.ack` once it is stored: the worker keeps a
   * result (and announces the job in `hello.inflight`) until then, and sends it again after a reconnect.
   */
  acks: z.boolean().default(false),
  /**
   * The server takes outputs past `LIMITS.blobValueBytes` uploaded over HTTP (`job.complete`'s `outputBlob`)
   * instead of in the frame; a worker that said `blobs` in `hello` also gets big inputs by reference (`inputBlob`)
   * where the store keeps them as files.
   */
  blobs: z.boolean().default(false),
});
export const AckMessage = z.object({
  type: z.literal('job.ack'),
  ...jobRef,
});
export const AssignMessage = z.object({
  type: z.literal('job.assign'),
  ...jobRef,
  input: JsonObject,
  s3Config: S3Config.optional(),
  /** Epoch ms at which the server will time the job out. */
  deadline: z.number().int().optional(),
  /** W3C `traceparent` of the job's run span, with tracing on: the worker's handler span is its child. */
  traceparent: z.string().max(256).optional(),
  /**
   * A big input kept as a blob (to a worker that said `blobs`): `input` is `{}` and the input is the JSON object
   * at `url` (a path on the control plane, read with the worker token), `size` bytes.
   */
  inputBlob: z.object({ url: z.string().max(600), size: z.number().int().min(0) }).optional(),
  /** The batch the job belongs to (`POST /v2/<ep>/batch`): runpod-python 1.12 prefixes its log lines with it. */
  batchId: z.string().max(100).optional(),
});
export const CancelMessage = z.object({
  type: z.literal('job.cancel'),
  ...jobRef,
  reason: z.enum(['cancelled', 'timed_out', 'expired', 'stale']),
});
export const DrainMessage = z.object({
  type: z.literal('drain'),
  /** Epoch ms by which running jobs should finish. */
  deadline: z.number().int(),
});
export const ErrorMessage = z.object({
  type: z.literal('error'),
  code: z.enum(WS_ERROR_CODES),
  message: z.string(),
});

export const ServerMessage = z.discriminatedUnion('type', [
  WelcomeMessage,
  AssignMessage,
  AckMessage,
  CancelMessage,
  DrainMessage,
  ErrorMessage,
  PingMessage,
  PongMessage,
]);
export type ServerMessage = z.infer<typeof ServerMessage>;
export type AssignMessage = z.infer<typeof AssignMessage>;
export type CancelMessage = z.infer<typeof CancelMessage>;
export type AckMessage = z.infer<typeof AckMessage>;
export type WelcomeMessage = z.infer<typeof WelcomeMessage>;
