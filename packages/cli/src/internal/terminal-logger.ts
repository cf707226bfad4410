import { lineBatcher } from '@berth/protocol/internal';
import { createLogger, type Logger, type LogFormat, type LogLevel } from '@berth/server';
import type { Io } from './io.js';

/**
 * The control plane's logger under `berth`: JSON lines on stdout (every level: one stream for a log pipeline),
 * or pretty lines (`12:00:01 info  job completed jobId=… ms=12`) with debug and info on stdout, warn and error on
 * stderr.
 */
export function createTerminalLogger(
  level: LogLevel,
  format: LogFormat,
  io: Pick<Io, 'stdout' | 'stderr'>,
  color: boolean,
): Logger {
  // JSON: the lines of one event-loop turn in one write (a busy control plane writes a line per job).
  if (format === 'json') return createLogger({ level, write: lineBatcher((chunk) => void io.stdout.write(chunk)) });
  return createLogger({
    level,
    format,
    color,
    write: (line, at) => void (at === 'warn' || at === 'error' ? io.stderr : io.stdout).write(line),
  });
}
