import type { CancelMessage, WorkerMessage } from '@berth/protocol';
import type { JobRef, JobTable } from './job-table.js';

/**
 * A `job.cancel` from the control plane: aborts the attempt's signal; its result becomes `job.fail` with `aborted`.
 * For an attempt this worker does not hold (unknown, or already reported), answers that at once so the server
 * releases the credit if it still counts it.
 */
export function cancelJob(table: JobTable, msg: CancelMessage, send: (msg: WorkerMessage) => boolean): void {
  const reason = `cancelled by the control plane (${msg.reason})`;
  const entry = table.get(msg);
  if (!entry) {
    send({ type: 'job.fail', id: msg.id, attempt: msg.attempt, error: reason, aborted: true });
    return;
  }
  entry.log.info('job cancelled', { reason: msg.reason });
  entry.cancel(reason);
  table.sweep(entry);
}

/**
 * The `welcome.stale` list after a reconnect: attempts the control plane no longer runs. A finished one whose
 * result went out is forgotten (stored before the reconnect, or no longer wanted); any other is cancelled.
 */
export function dropStale(table: JobTable, stale: readonly JobRef[]): void {
  for (const ref of stale) {
    const entry = table.get(ref);
    if (!entry) continue;
    if (entry.state === 'finished' && !entry.hasUnsent) {
      entry.ack();
      continue;
    }
    entry.log.info('the control plane no longer runs this attempt; dropping it', { attempt: ref.attempt });
    entry.cancel('stale: the control plane no longer runs this attempt');
  }
}

/** A newer attempt of a job supersedes the older ones this worker still runs. */
export function supersedeOlderAttempts(table: JobTable, ref: JobRef): void {
  if (!table.holdsJob(ref.id)) return; // the usual case: no scan of the table per assignment
  for (const other of table.values()) {
    if (other.spec.id === ref.id && other.spec.attempt < ref.attempt)
      other.cancel(`superseded by attempt ${ref.attempt}`);
  }
}
