// The toolkit's one logger (@berth/protocol/log), re-exported for handlers: `job.log` is one of these, its lines
// carrying `jobId`, `endpointId`, `workerId` and `attempt`.
export {
  createLogger,
  isLogLevel,
  LOG_LEVELS,
  safeJson,
  type Logger,
  type LoggerOptions,
  type LogFields,
  type LogFormat,
  type LogLevel,
  type LogRecord,
  type LogSink,
} from '@berth/protocol/log';
