import { LOG_LINES_PER_MESSAGE, LOG_MESSAGE_MAX_CHARS, type LogLine, type LogMessage } from '@berth/protocol';
import { safeJson, type LogFields, type Logger, type LogRecord } from '../../logger.js';

const FIELDS_MAX_CHARS = 8_000;
const RANK = { debug: 10, info: 20, warn: 30, error: 40 } as const;

/**
 * Ships what handlers log to the control plane as `job.log` messages: lines are buffered per job attempt and sent
 * every `flushMs` (or at once when a message is full). While disconnected they wait, up to `maxBuffered` lines in
 * all; past that, new lines are dropped and counted (a worker must not run out of memory over its logs).
 */
export class LogShipper {
  private readonly pending = new Map<string, { id: string; attempt: number; lines: LogLine[] }>();
  private buffered = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Lines dropped because the buffer was full. */
  dropped = 0;

  constructor(
    private readonly send: (msg: LogMessage) => boolean,
    private readonly flushMs = 100,
    private readonly maxBuffered = 2_000,
  ) {}

  add(id: string, attempt: number, level: LogLine['level'], msg: string, fields?: LogFields): void {
    if (this.buffered >= this.maxBuffered) {
      this.dropped++;
      return;
    }
    const line: LogLine = {
      t: Date.now(),
      level,
      msg: msg.length > LOG_MESSAGE_MAX_CHARS ? `${msg.slice(0, LOG_MESSAGE_MAX_CHARS - 1)}…` : msg,
    };
    if (fields !== undefined && Object.keys(fields).length > 0) {
      const text = safeJson(fields);
      line.fields =
        text.length > FIELDS_MAX_CHARS
          ? { truncated: `${text.slice(0, 200)}…` }
          : (JSON.parse(text) as Record<string, unknown>);
    }
    const key = `${id}#${attempt}`;
    let p = this.pending.get(key);
    if (!p) this.pending.set(key, (p = { id, attempt, lines: [] }));
    p.lines.push(line);
    this.buffered++;
    if (p.lines.length >= LOG_LINES_PER_MESSAGE) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.flushMs).unref();
  }

  /** Sends what is buffered, in order, while the connection takes it. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const [key, p] of this.pending) {
      while (p.lines.length > 0) {
        const lines = p.lines.slice(0, LOG_LINES_PER_MESSAGE);
        if (!this.send({ type: 'job.log', id: p.id, attempt: p.attempt, lines })) {
          this.timer = setTimeout(() => this.flush(), 1_000).unref(); // disconnected: try again later
          return;
        }
        p.lines.splice(0, lines.length);
        this.buffered -= lines.length;
      }
      this.pending.delete(key);
    }
  }

  /** A job logger that prints through `base` and also ships lines at `info` and above (all when `base` is at debug). */
  wrap(base: Logger, id: string, attempt: number): Logger {
    const min = base.level === 'debug' ? RANK.debug : RANK.info;
    const ship = (level: LogLine['level'], msg: unknown, fields?: LogFields) => {
      if (RANK[level] >= min) this.add(id, attempt, level, typeof msg === 'string' ? msg : safeJson(msg), fields);
    };
    const make = (logger: Logger): Logger => ({
      level: logger.level,
      debug: (m, f) => (logger.debug(m, f), ship('debug', m, f)),
      info: (m, f) => (logger.info(m, f), ship('info', m, f)),
      warn: (m, f) => (logger.warn(m, f), ship('warn', m, f)),
      error: (m, f) => (logger.error(m, f), ship('error', m, f)),
      child: (tags) => make(logger.child(tags)),
    });
    return make(base);
  }
}

export type { LogRecord };
