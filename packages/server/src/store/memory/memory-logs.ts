import { JOB_LOG_MAX_LINES, type JobLog, type JobLogLine } from '../types.js';

/** Per-job logs of the memory store, dropped with their job. */
export class MemoryJobLogs {
  private readonly logs = new Map<string, JobLog>();

  append(id: string, lines: JobLogLine[]): number {
    let log = this.logs.get(id);
    if (!log) this.logs.set(id, (log = { lines: [], dropped: 0 }));
    const room = Math.max(0, JOB_LOG_MAX_LINES - log.lines.length);
    const kept = lines.slice(0, room);
    for (const l of kept) log.lines.push({ ...l });
    log.dropped += lines.length - kept.length;
    return kept.length;
  }

  get(id: string): JobLog {
    const log = this.logs.get(id);
    return log ? { lines: log.lines.map((l) => ({ ...l })), dropped: log.dropped } : { lines: [], dropped: 0 };
  }

  drop(id: string): void {
    this.logs.delete(id);
  }
}
