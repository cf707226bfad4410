import { formatLogFields, LOG_LEVEL_RANK, type LogEventLevel, type Logger, type LogLevel } from '@berth/protocol';

export { silentLogger, type Logger, type LogLevel } from '@berth/protocol';

/** Options of `createConsoleLogger`. */
export interface ConsoleLoggerOptions {
  /** Lowest level printed. Default: `info`. */
  level?: LogLevel;
  /** ANSI colors (dim time and fields, colored level). Default: `false`. */
  color?: boolean;
  /** Where each line goes (ends with `\n`). Default: stderr. `berth` sends debug and info to stdout. */
  write?: (line: string, level: LogEventLevel) => void;
}

const STYLE: Record<LogEventLevel | 'dim', [number, number]> = {
  debug: [2, 22],
  info: [36, 39],
  warn: [33, 39],
  error: [31, 39],
  dim: [2, 22],
};

/**
 * The console logger of the server and of `berth`: one readable line per event,
 * `12:00:01 info  job completed jobId=... ms=12` (UTC, like the worker lines `berth dev` shows).
 *
 * @example const log = createConsoleLogger({ level: 'debug', color: process.stderr.isTTY });
 * @example const log = createConsoleLogger('info', (line) => lines.push(line)); // level, then a writer of lines without `\n`
 */
export function createConsoleLogger(level?: LogLevel | ConsoleLoggerOptions, write?: (line: string) => void): Logger {
  const o: ConsoleLoggerOptions = typeof level === 'object' ? level : { level: level ?? 'info' };
  const out =
    o.write ?? (write ? (line: string) => write(line.slice(0, -1)) : (line: string) => process.stderr.write(line));
  const min = LOG_LEVEL_RANK[o.level ?? 'info'];
  const paint = (style: LogEventLevel | 'dim', text: string) =>
    o.color ? `\x1b[${STYLE[style][0]}m${text}\x1b[${STYLE[style][1]}m` : text;
  const at = (lvl: LogEventLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (LOG_LEVEL_RANK[lvl] < min) return;
    const time = new Date().toISOString().slice(11, 19);
    const extra = formatLogFields(fields);
    out(`${paint('dim', time)} ${paint(lvl, lvl.padEnd(5))} ${msg}${extra ? ` ${paint('dim', extra)}` : ''}\n`, lvl);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
