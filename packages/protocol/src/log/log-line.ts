import { formatLogFields, type LogEventLevel, type LogFields } from '../log.js';

/** pino's level numbers: a JSON line's `level` (so pino-pretty, and log pipelines set up for pino, read it). */
export const PINO_LEVELS: Readonly<Record<LogEventLevel, number>> = { debug: 20, info: 30, warn: 40, error: 50 };
const LEVEL_OF_NUMBER = new Map(Object.entries(PINO_LEVELS).map(([k, v]) => [v, k as LogEventLevel]));

/**
 * Bound fields as the inside of a JSON object, with a leading comma (`,"jobId":"j1"`), or '' for none: computed
 * once per child logger, then pasted into each line (pino's way).
 *
 * @example jsonFragment({ jobId: 'j1' }) // ',"jobId":"j1"'
 */
export function jsonFragment(fields: LogFields | undefined): string {
  if (!fields) return '';
  let out = '';
  for (const key in fields) {
    const v = fields[key];
    if (v !== undefined) out += `,${JSON.stringify(key)}:${jsonValue(v)}`;
  }
  return out;
}

/**
 * One JSON line (no newline) in pino's shape: `{"level":30,"time":<epoch ms>,<bound>,<fields>,"msg":"..."}`.
 *
 * @example jsonLine('info', 0, ',"pid":1', { ms: 3 }, 'done') // '{"level":30,"time":0,"pid":1,"ms":3,"msg":"done"}'
 */
export function jsonLine(
  level: LogEventLevel,
  time: number,
  bound: string,
  fields: LogFields | undefined,
  msg: string,
) {
  return `{"level":${PINO_LEVELS[level]},"time":${time}${bound}${jsonFragment(fields)},"msg":${JSON.stringify(msg)}}`;
}

/** A value as JSON: plain values by `JSON.stringify`, errors as `{type, message, stack}`; never throws. */
function jsonValue(v: unknown): string {
  if (typeof v !== 'object' || v === null) {
    if (typeof v === 'bigint') return `"${v}"`;
    return JSON.stringify(v) ?? 'null';
  }
  return safeJson(v);
}

/**
 * JSON.stringify that never throws: errors become `{type, message, stack}` (pino's error serializer), BigInt a
 * string, cycles `"[Circular]"`.
 *
 * @example safeJson({ n: 1n }) // '{"n":"1"}'
 */
export function safeJson(value: unknown): string {
  const seen = new WeakSet<object>();
  try {
    return (
      JSON.stringify(value, (_key, v: unknown) => {
        if (typeof v === 'bigint') return v.toString();
        if (v instanceof Error) return { type: v.name, message: v.message, stack: v.stack };
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

const STYLE: Record<LogEventLevel | 'dim', [number, number]> = {
  debug: [2, 22],
  info: [36, 39],
  warn: [33, 39],
  error: [31, 39],
  dim: [2, 22],
};

/**
 * One readable line (no newline): `12:00:01 info  job completed jobId=j1 ms=12` (UTC time; fields as `key=value`,
 * bound fields first); ANSI colors with `color`.
 *
 * @example prettyLine('info', 0, { jobId: 'j1' }, 'done', false) // '00:00:00 info  done jobId=j1'
 */
export function prettyLine(
  level: LogEventLevel,
  time: number,
  fields: LogFields | undefined,
  msg: string,
  color: boolean,
) {
  const paint = (style: LogEventLevel | 'dim', text: string) =>
    color ? `\x1b[${STYLE[style][0]}m${text}\x1b[${STYLE[style][1]}m` : text;
  const clock = new Date(time).toISOString().slice(11, 19);
  const extra = escapeControls(formatLogFields(fields));
  const text = escapeControls(msg);
  return `${paint('dim', clock)} ${paint(level, level.padEnd(5))} ${text}${extra ? ` ${paint('dim', extra)}` : ''}`;
}

/**
 * Characters a terminal acts on rather than prints: C0 controls but tab (ESC starts an escape sequence, CR rewrites
 * the line, BEL rings), DEL, C1 controls (U+009B is a one-byte CSI), the line and paragraph separators and the bidi
 * overrides and isolates (text that reads differently from what it is).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE = /\r?\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A handler's text made safe to print on a terminal: a newline as `\n`, CR as `\r`, every other unsafe character as
 * `\uXXXX` (as JSON writes it), so a handler's output cannot move the cursor, recolor, retitle or clear the terminal.
 *
 * @example escapeControls('a\x1b[2Jb\n') // 'a\\u001b[2Jb\\n'
 */
function escapeControls(s: string): string {
  return s.replace(UNSAFE, (c) =>
    c.endsWith('\n') ? '\\n' : c === '\r' ? '\\r' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A JSON log line read back (what `berth dev` does with its workers' output). */
export interface ParsedLogLine {
  level: LogEventLevel;
  time: number;
  msg: string;
  /** Every other field (bound ones included), `pid` and `hostname` left out. */
  fields: LogFields;
}

/**
 * Reads a line `createLogger` wrote in JSON; undefined for any other line.
 *
 * @example parseJsonLogLine('{"level":30,"time":0,"msg":"hi"}') // { level: 'info', time: 0, msg: 'hi', fields: {} }
 */
export function parseJsonLogLine(line: string): ParsedLogLine | undefined {
  if (!line.startsWith('{"level":')) return undefined;
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    return undefined;
  }
  const { level, time, msg, pid: _pid, hostname: _host, ...fields } = o as Record<string, unknown>;
  const name = typeof level === 'number' ? LEVEL_OF_NUMBER.get(level) : undefined;
  if (!name || typeof time !== 'number' || typeof msg !== 'string') return undefined;
  return { level: name, time, msg, fields };
}
