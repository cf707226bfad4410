// The toolkit's one logger (@berth/protocol): JSON lines or pretty, the same for the server, `berth` and workers.
export {
  createLogger,
  silentLogger,
  type Logger,
  type LoggerOptions,
  type LogFormat,
  type LogLevel,
} from '@berth/protocol';
