/**
 * Log levels, from most to least verbose. `silent` prints nothing. One list for the worker (`BERTH_LOG_LEVEL`),
 * the server's logger and the CLI's `--log-level`.
 *
 * @example isLogLevel('warn') // true
 */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Levels an event can have (every level but `silent`): the worker's `log` messages, stored job logs. */
export const LOG_EVENT_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogEventLevel = (typeof LOG_EVENT_LEVELS)[number];

/** Rank of each level: a logger at level L prints an event at level E when `LOG_LEVEL_RANK[E] >= LOG_LEVEL_RANK[L]`. */
export const LOG_LEVEL_RANK: Readonly<Record<LogLevel, number>> = {
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
  silent: 100,
};

/**
 * True when `value` names a log level.
 *
 * @example isLogLevel('verbose') // false
 */
export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** Extra structured data of a log event (`jobId`, `workerId`, `endpointId`, ...). */
export type LogFields = Record<string, unknown>;

/** Output formats of `createLogger`: JSON lines (pino's shape) or one readable line per event. */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * True when `value` names a log format.
 *
 * @example isLogFormat('json') // true
 */
export function isLogFormat(value: string): value is LogFormat {
  return (LOG_FORMATS as readonly string[]).includes(value);
}

/**
 * The toolkit's one logger shape, for the server (`createServer({ logger })`), the worker runtime and a handler's
 * `job.log`: a message plus fields, children carrying bound fields (`jobId`, `workerId`, ...) on every line.
 * `createLogger` makes one; any object of this shape (a pino logger wrapped, a test double) works too.
 *
 * @example const log = createLogger({ level: 'info' }).child({ workerId: 'w-1' }); log.info('ready', { ms: 12 });
 */
export interface Logger {
  debug(msg: unknown, fields?: LogFields): void;
  info(msg: unknown, fields?: LogFields): void;
  warn(msg: unknown, fields?: LogFields): void;
  error(msg: unknown, fields?: LogFields): void;
  /** A logger whose lines also carry `bindings`. */
  child(bindings: LogFields): Logger;
  /** The lowest level this logger prints. */
  readonly level: LogLevel;
}

/** A logger that drops everything. */
export const silentLogger: Logger = {
  level: 'silent',
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silentLogger,
};

/**
 * Fields as `key=value` pairs: plain strings bare, strings with spaces or quotes JSON-quoted, errors by message,
 * objects as JSON; undefined values left out.
 *
 * @example formatLogFields({ a: 1, b: 'x y' }) // 'a=1 b="x y"'
 */
export function formatLogFields(fields: LogFields | undefined): string {
  if (!fields) return '';
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${formatValue(v)}`)
    .join(' ');
}

function formatValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v instanceof Error) return JSON.stringify(v.message);
  if (typeof v === 'object' && v !== null) {
    try {
      return JSON.stringify(v);
    } catch {
      return '[unserializable]';
    }
  }
  return String(v);
}
