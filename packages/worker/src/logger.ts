import { LOG_LEVEL_RANK, type LogEventLevel, type LogFields, type LogLevel } from '@berth/protocol';

// Levels, their order and `isLogLevel` are the toolkit's one list (@berth/protocol); re-exported for handlers.
export { isLogLevel, LOG_LEVELS, type LogFields, type LogLevel } from '@berth/protocol';

/**
 * One log event, as handed to a `LogSink` (and collected in `runJob(...).logs`).
 *
 * @example const records: LogRecord[] = []; createLogger({ sink: (r) => records.push(r) });
 */
export interface LogRecord {
  level: LogEventLevel;
  time: Date;
  msg: string;
  worker?: string;
  job?: string;
  fields?: LogFields;
}

/**
 * Where log records go; the default formats one line per record on stderr.
 *
 * @example const sink: LogSink = (r) => myPinoLogger[r.level]({ ...r.fields, job: r.job }, r.msg);
 */
export type LogSink = (record: LogRecord) => void;

/**
 * A small structured logger. Every line names the worker and, inside a handler, the job:
 * `info  2025-01-01T00:00:00.000Z worker=gpu-1 job=abc-u1 loading model {"size":"7b"}`.
 *
 * @example
 * start({
 *   handler: async (job) => {
 *     job.log.info('loading model', { size: '7b' });
 *     return run(job.input);
 *   },
 * });
 */
export interface Logger {
  debug(msg: unknown, fields?: LogFields): void;
  info(msg: unknown, fields?: LogFields): void;
  warn(msg: unknown, fields?: LogFields): void;
  error(msg: unknown, fields?: LogFields): void;
  /** A logger whose lines also carry these tags (`job`, `worker`). */
  child(tags: { job?: string; worker?: string }): Logger;
  /** The lowest level this logger prints. */
  readonly level: LogLevel;
}

/**
 * Options of `createLogger`.
 *
 * @example createLogger({ level: 'warn', worker: 'gpu-1', sink: (r) => console.log(r.msg) })
 */
export interface LoggerOptions {
  /** Lowest level printed. Default: `info` (the runtime reads `BERTH_LOG_LEVEL`). */
  level?: LogLevel;
  /** Worker id printed as `worker=<id>`. */
  worker?: string;
  /** Job id printed as `job=<id>`. */
  job?: string;
  /** Where records go. Default: one formatted line per record on stderr. */
  sink?: LogSink;
}

/**
 * Creates a logger.
 *
 * @example
 * const log = createLogger({ level: 'debug', worker: 'gpu-1' });
 * log.child({ job: 'abc-u1' }).info('started', { attempt: 1 });
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const sink = options.sink ?? writeLine;
  const make = (worker: string | undefined, job: string | undefined): Logger => {
    const emit =
      (lvl: LogRecord['level']) =>
      (msg: unknown, fields?: LogFields): void => {
        if (LOG_LEVEL_RANK[lvl] < LOG_LEVEL_RANK[level]) return;
        const record: LogRecord = { level: lvl, time: new Date(), msg: typeof msg === 'string' ? msg : safeJson(msg) };
        if (worker !== undefined) record.worker = worker;
        if (job !== undefined) record.job = job;
        if (fields !== undefined) record.fields = isPlainFields(fields) ? fields : { value: fields };
        sink(record);
      };
    return {
      level,
      debug: emit('debug'),
      info: emit('info'),
      warn: emit('warn'),
      error: emit('error'),
      child: (tags) => make(tags.worker ?? worker, tags.job ?? job),
    };
  };
  return make(options.worker, options.job);
}

/**
 * Formats a record as one line: `level time worker=<id> job=<id> msg {json fields}`.
 *
 * @example formatLogLine({ level: 'info', time: new Date(0), msg: 'hi' }) // 'info  1970-01-01T00:00:00.000Z hi'
 */
export function formatLogLine(record: LogRecord): string {
  let line = `${record.level.padEnd(5)} ${record.time.toISOString()}`;
  if (record.worker !== undefined) line += ` worker=${record.worker}`;
  if (record.job !== undefined) line += ` job=${record.job}`;
  line += ` ${record.msg.replace(/\r?\n/g, '\\n')}`;
  if (record.fields !== undefined && Object.keys(record.fields).length > 0) line += ` ${safeJson(record.fields)}`;
  return line;
}

function writeLine(record: LogRecord): void {
  process.stderr.write(`${formatLogLine(record)}\n`);
}

function isPlainFields(value: unknown): value is LogFields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON.stringify that never throws: errors keep name/message/stack, BigInt becomes a string, cycles are cut. */
export function safeJson(value: unknown): string {
  const seen = new WeakSet<object>();
  try {
    return (
      JSON.stringify(value, (_key, v: unknown) => {
        if (typeof v === 'bigint') return v.toString();
        if (v instanceof Error) return { name: v.name, message: v.message, stack: v.stack };
        if (typeof v === 'object' && v !== null) {
          if (seen.has(v)) return '[Circular]';
          seen.add(v);
        }
        return v;
      }) ?? String(value)
    );
  } catch {
    return String(value);
  }
}
