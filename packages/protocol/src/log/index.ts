/**
 * `@berth/protocol/log`: the one logger of the server, `berth` and workers. Log levels and the `Logger` shape
 * (`../log.ts`, whose event levels the wire's log message also uses), `createLogger` (JSON or pretty lines on
 * stderr, or records to a sink), `safeJson` for values that may not serialize and `errorText` for an error in a
 * message (log the error itself under `err`: its stack is kept).
 */
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
} from '../log.js';
export { createLogger, type LoggerOptions, type LogRecord, type LogSink } from './create-logger.js';
export { errorText } from './error-text.js';
export { safeJson } from './log-line.js';
