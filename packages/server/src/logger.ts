/** Structured logger: a message plus fields (jobId, workerId, endpointId, ...). */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof LEVELS;

function format(fields?: Record<string, unknown>): string {
  if (!fields) return '';
  let out = '';
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    out += ` ${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`;
  }
  return out;
}

/**
 * A logger writing one readable line per event to stderr: `12:00:01.123 INFO  job finished jobId=... workerId=...`.
 *
 * @example const log = createConsoleLogger('info');
 */
export function createConsoleLogger(level: LogLevel = 'info', write: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Logger {
  const min = LEVELS[level];
  const at = (lvl: Exclude<LogLevel, 'silent'>) => (msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    const time = new Date().toISOString().slice(11, 23);
    write(`${time} ${lvl.toUpperCase().padEnd(5)} ${msg}${format(fields)}`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
