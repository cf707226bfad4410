import type { LogMessage } from '@berth/protocol';
import type { JobLogLine } from '../store/types.js';
import type { WorkerSession } from '../workers/worker-session.js';
import type { CoreContext } from './context.js';

/**
 * Stores the log lines a worker forwarded for one of its job attempts (`job.log`). A worker may only write the
 * log of a job of its own endpoint that it runs or ran (the store is read when the attempt is no longer in flight,
 * e.g. lines logged after the result).
 */
export async function recordJobLogs(ctx: CoreContext, s: WorkerSession, msg: LogMessage): Promise<void> {
  if (s.inflight.get(msg.id) !== msg.attempt) {
    const job = await ctx.store.get(msg.id, { input: false });
    if (!job || job.endpointId !== s.endpointId || job.workerId !== s.workerId || job.attempt !== msg.attempt) {
      ctx.logger.debug('log lines for a job this worker does not hold: dropped', {
        jobId: msg.id,
        workerId: s.workerId,
        attempt: msg.attempt,
      });
      return;
    }
  }
  const lines = msg.lines.map((l): JobLogLine => {
    const line: JobLogLine = { at: l.t, level: l.level, message: l.msg, workerId: s.workerId, attempt: msg.attempt };
    if (l.fields !== undefined) line.fields = l.fields;
    return line;
  });
  await ctx.store.appendLogs(msg.id, lines);
}
