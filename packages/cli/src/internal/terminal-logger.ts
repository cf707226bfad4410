import { createConsoleLogger, type Logger, type LogLevel } from '@berth/server';
import type { Io } from './io.js';

/**
 * The server's console logger on a terminal: `12:00:01 info  job completed jobId=… ms=12`, debug and info on
 * stdout, warn and error on stderr.
 */
export function createTerminalLogger(level: LogLevel, io: Pick<Io, 'stdout' | 'stderr'>, color: boolean): Logger {
  return createConsoleLogger({
    level,
    color,
    write: (line, at) => (at === 'warn' || at === 'error' ? io.stderr : io.stdout).write(line),
  });
}
