// The root of `@berth/protocol`: the wire contract (zod schemas and types of the request body, job object, replies,
// WebSocket messages; error codes; limits and id patterns), `ConfigError` and `describeValue`. The logger is
// `@berth/protocol/log`, OpenTelemetry start-up and W3C `traceparent` `@berth/protocol/tracing`. Named exports only:
// a module's other exports are internal. Plumbing the toolkit's packages share outside the contract is in
// `@berth/protocol/internal` (not public API).

// Errors: the stable codes, their HTTP statuses, the error body.
export {
  BerthError,
  ERROR_STATUS,
  toErrorBody,
  type ErrorBody,
  type ErrorCode,
  type WsErrorCode,
} from './errors.js';
export { ConfigError } from './user-errors.js';
export { describeValue } from './describe-value.js';

// Limits and id patterns.
export { ENDPOINT_ID_RE, JOB_ID_RE, LIMITS, WORKER_ID_RE } from './limits.js';

// The HTTP API: request body, job object, replies.
export {
  ExecutionPolicy,
  isTerminal,
  JobObject,
  JobRequest,
  JobStatus,
  JobTokenRequest,
  S3Config,
  WebhookEvent,
  type HealthReply,
  type PurgeReply,
  type RunReply,
  type StreamReply,
} from './job.js';
export {
  ErrorBodySchema,
  HealthReplySchema,
  PurgeReplySchema,
  RunReplySchema,
  StreamReplySchema,
} from './replies.js';
export { ScalingReplySchema, type ScalingReply } from './scaling.js';
export type { BatchStatus, BatchSummary } from './batch.js';

// The worker WebSocket protocol (docs/worker-protocol.md).
export {
  AssignMessage,
  CancelMessage,
  HelloMessage,
  LOG_LINES_PER_MESSAGE,
  LOG_MESSAGE_MAX_CHARS,
  LogLine,
  LogMessage,
  PROTOCOL_VERSION,
  ServerMessage,
  WelcomeMessage,
  WORKER_WS_PATH,
  WorkerMessage,
} from './ws.js';
export { runpodWorkerEnv } from './runpod-env.js';

// Decoding: every function returns a result and never throws.
export {
  decode,
  decodeJobRequest,
  decodeServerMessage,
  decodeWorkerMessage,
  type DecodeIssue,
  type DecodeResult,
} from './decode.js';
