import type { LogLevel } from '../args.js';
import { paint, type Io, type Style } from './io.js';

/** The logger shape `@berth/server` accepts. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const LABEL: Record<LogLevel, [string, Style]> = {
  debug: ['debug', 'dim'],
  info: ['info ', 'cyan'],
  warn: ['warn ', 'yellow'],
  error: ['error', 'red'],
};

export interface ConsoleLoggerOptions {
  level: LogLevel;
  io: Pick<Io, 'stdout' | 'stderr'>;
  color: boolean;
}

/**
 * A readable one-line-per-event logger for the terminal: `12:00:01 info  job completed jobId=… ms=12`.
 * debug and info go to stdout, warn and error to stderr.
 */
export function createConsoleLogger({ level, io, color }: ConsoleLoggerOptions): Logger {
  const c = paint(color);
  const write = (at: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[at] < RANK[level]) return;
    const time = new Date().toISOString().slice(11, 19);
    const [label, style] = LABEL[at];
    const extra = formatFields(fields);
    const line = `${c('dim', time)} ${c(style, label)} ${msg}${extra ? ` ${c('dim', extra)}` : ''}\n`;
    (RANK[at] >= RANK.warn ? io.stderr : io.stdout).write(line);
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
  };
}

/** `{a: 1, b: 'x y'}` -> `a=1 b="x y"`. */
export function formatFields(fields: Record<string, unknown> | undefined): string {
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
