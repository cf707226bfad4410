// The root of `@berth/protocol`: the wire contract (zod schemas and types of the request body, job object, replies,
// WebSocket messages; error codes; limits and id patterns) and the few concepts every Berth package shares (log
// levels, the `Logger` shape and `createLogger`, `ConfigError`, OpenTelemetry start-up, W3C `traceparent`).
// Named exports only: a module's other exports are internal. Plumbing the server and worker share outside the
// contract is in `@berth/protocol/internal` (not public API).

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

// Logging: one logger for the server, `berth` and workers.
export {
  isLogFormat,
  isLogLevel,
  LOG_FORMATS,
  LOG_LEVELS,
  silentLogger,
  type LogEventLevel,
  type LogFields,
  type LogFormat,
  type Logger,
  type LogLevel,
} from './log.js';
export { createLogger, type LoggerOptions, type LogRecord, type LogSink } from './create-logger.js';
export { parseJsonLogLine, prettyLine, safeJson, type ParsedLogLine } from './log-line.js';
export { lineBatcher } from './line-batcher.js';

// Tracing.
export { berthTracer, startTracing, stopTracing } from './tracing.js';
export { formatTraceparent, parseTraceparent } from './traceparent.js';
