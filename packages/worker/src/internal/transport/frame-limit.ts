import { LIMITS, type WorkerMessage } from '@berth/protocol';

/**
 * The text to send for `message`, within the control plane's frame limit (`LIMITS.workerFrameBytes`): a result
 * or chunk batch too large to send becomes a `job.fail` naming the size, instead of a frame the control plane
 * would refuse by closing the connection (after which the unacknowledged result would be re-sent forever).
 */
export function frameText(message: WorkerMessage, limit: number = LIMITS.workerFrameBytes): string {
  const text = JSON.stringify(message);
  if (text.length * 3 <= limit) return text; // UTF-8 takes at most 3 bytes per UTF-16 unit: surely small enough
  const bytes = Buffer.byteLength(text);
  if (
    bytes <= limit ||
    (message.type !== 'job.complete' && message.type !== 'job.stream' && message.type !== 'job.progress')
  )
    return text;
  const what =
    message.type === 'job.complete'
      ? 'output'
      : message.type === 'job.stream'
        ? 'stream chunk batch'
        : 'progress value';
  const error = `${what} too large: ${bytes} bytes of JSON, over the worker frame limit of ${limit} bytes; upload large outputs as files (docs/output-storage.md)`;
  return JSON.stringify({ type: 'job.fail', id: message.id, attempt: message.attempt, error } satisfies WorkerMessage);
}
