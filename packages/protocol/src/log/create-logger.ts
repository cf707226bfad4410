import { hostname } from 'node:os';
import {
  LOG_LEVEL_RANK,
  type LogEventLevel,
  type LogFields,
  type LogFormat,
  type Logger,
  type LogLevel,
} from '../log.js';
import { jsonFragment, jsonLine, prettyLine, safeJson } from './log-line.js';
import { lineBatcher } from './line-batcher.js';

/**
 * One log event as a `LogSink` gets it (and as `runJob(...).logs` collects it): `fields` holds the bound fields
 * (`jobId`, `workerId`, ...) then the call's own.
 *
 * @example const records: LogRecord[] = []; createLogger({ sink: (r) => records.push(r) });
 */
export interface LogRecord {
  level: LogEventLevel;
  time: Date;
  msg: string;
  fields?: LogFields;
}

/**
 * Where records go instead of being formatted.
 *
 * @example const sink: LogSink = (r) => myPinoLogger[r.level](r.fields ?? {}, r.msg);
 */
export type LogSink = (record: LogRecord) => void;

/**
 * Options of `createLogger`.
 *
 * @example createLogger({ level: 'warn', format: 'pretty', bindings: { workerId: 'gpu-1' } })
 */
export interface LoggerOptions {
  /** Lowest level printed. Default: `info`. */
  level?: LogLevel;
  /** `json`: pino's JSON lines (`{"level":30,"time":...,"pid":...,"hostname":...,...,"msg":"..."}`); `pretty`: `12:00:01 info  msg key=value`. Default: `json`. */
  format?: LogFormat;
  /** ANSI colors in the pretty format. Default: `false`. */
  color?: boolean;
  /** Fields on every line (a child adds its own). Default: none. */
  bindings?: LogFields;
  /** Where each line goes (it ends with `\n`). Default: stderr, the lines of one event-loop turn in one write (`lineBatcher`). */
  write?: (line: string, level: LogEventLevel) => void;
  /** Takes the records instead of formatted lines (`format`, `color` and `write` are then unused). */
  sink?: LogSink;
}

let stderrLines: ((line: string) => void) | undefined;
const toStderr = (line: string): void => {
  stderrLines ??= lineBatcher((chunk) => void process.stderr.write(chunk));
  stderrLines(line);
};

/**
 * The toolkit's logger, the same for the control plane, `berth` and workers. JSON lines by default: each names
 * its process (`pid`, `hostname`) and carries the bound fields, so per-job lines have `jobId`, `endpointId`,
 * `workerId` and `attempt`. Never throws on odd messages or fields (cycles, BigInt, errors).
 *
 * @example
 * const log = createLogger({ level: 'debug' }).child({ workerId: 'gpu-1' });
 * log.child({ jobId: 'abc-u1', attempt: 1 }).info('job received');
 * // {"level":30,"time":1764140000000,"pid":4242,"hostname":"box","workerId":"gpu-1","jobId":"abc-u1","attempt":1,"msg":"job received"}
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const min = LOG_LEVEL_RANK[level];
  const pretty = options.format === 'pretty';
  const color = options.color ?? false;
  const write = options.write ?? toStderr;
  const sink = options.sink;
  const process_ = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;

  // A child's bound fields are serialized on its first line, not when it is made: a per-job child at a level that
  // prints nothing costs a closure.
  const make = (bindingsOf: () => LogFields | undefined, boundOf: () => string): Logger => {
    let cached: string | undefined;
    let merged: { fields: LogFields | undefined } | undefined;
    const bound = () => (cached ??= boundOf());
    const bindings = () => (merged ??= { fields: bindingsOf() }).fields;
    const emit = (lvl: LogEventLevel) =>
      LOG_LEVEL_RANK[lvl] < min
        ? () => {}
        : (msg: unknown, fields?: LogFields): void => {
            const text = typeof msg === 'string' ? msg : safeJson(msg);
            const own = fields === undefined || isPlainFields(fields) ? fields : { value: fields };
            const time = Date.now();
            if (!sink && !pretty) return write(`${jsonLine(lvl, time, bound(), own, text)}\n`, lvl);
            const b = bindings();
            const all = b && own ? { ...b, ...own } : (own ?? b);
            if (sink) {
              const record: LogRecord = { level: lvl, time: new Date(time), msg: text };
              if (all !== undefined) record.fields = all;
              return sink(record);
            }
            write(`${prettyLine(lvl, time, all, text, color)}\n`, lvl);
          };
    return {
      level,
      debug: emit('debug'),
      info: emit('info'),
      warn: emit('warn'),
      error: emit('error'),
      child: (more) =>
        make(
          () => {
            const b = bindings();
            return b ? { ...b, ...more } : more;
          },
          () => bound() + jsonFragment(more),
        ),
    };
  };
  return make(
    () => options.bindings,
    () => process_ + jsonFragment(options.bindings),
  );
}

function isPlainFields(value: unknown): value is LogFields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
