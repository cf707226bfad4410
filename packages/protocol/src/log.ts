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

/**
 * Structured logger: a message plus fields. `@berth/server` takes one (`createServer({ logger })`); the worker's
 * `job.log` is a richer logger of the same shape.
 *
 * @example const logger: Logger = { debug() {}, info: console.log, warn: console.warn, error: console.error };
 */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

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
