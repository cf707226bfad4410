import { executeJob, type ExecuteOptions, type JobResult } from './execute.js';
import { signalOf } from './lazy-abort.js';

/** `StartOptions.retry` resolved: `attempts` tries in all (1 = no retry), the first retry after `backoffMs`. */
export interface RetryPolicy {
  attempts: number;
  backoffMs: number;
}

/** No retries: every failure is final (the default). */
export const NO_RETRY: RetryPolicy = { attempts: 1, backoffMs: 0 };

/**
 * Runs a job like `executeJob`, calling the handler again when it throws, up to `policy.attempts` tries with an
 * exponential backoff (`backoffMs`, doubled before each next try). Final at once: `UnrecoverableError`, an input the
 * schema refuses, a job whose signal is aborted (cancel, execution timeout, shutdown: also during the wait), a
 * streaming job that already sent a chunk (the client has it; a second run would send it again), and a retry that
 * would start after the job's deadline. Never throws.
 *
 * @example const result = await executeWithRetry(options, { attempts: 3, backoffMs: 500 }); // tries at 0, 0.5 s, 1.5 s
 */
export function executeWithRetry(options: ExecuteOptions, policy: RetryPolicy): Promise<JobResult> {
  return policy.attempts <= 1 ? executeJob(options) : retrying(options, policy); // no extra promise without retries
}

async function retrying(options: ExecuteOptions, policy: RetryPolicy): Promise<JobResult> {
  const { signal, log, job } = options;
  let streamed = false;
  const onChunk = options.onChunk;
  const tracked: ExecuteOptions = {
    ...options,
    onChunk: (chunk, index) => {
      streamed = true;
      onChunk?.(chunk, index);
    },
  };
  for (let attempt = 1; ; attempt++) {
    const result = await executeJob(tracked);
    if (result.status !== 'FAILED' || result.unrecoverable || attempt >= policy.attempts) return result;
    const fields = { attempt: job.attempt, try: attempt, of: policy.attempts, error: result.error };
    if (streamed) {
      log.warn('handler failed after streaming; not retried (the chunks were sent)', fields);
      return result;
    }
    const waitMs = policy.backoffMs * 2 ** (attempt - 1);
    if (job.deadline !== undefined && Date.now() + waitMs >= job.deadline) {
      log.warn('handler failed; no retry before the job deadline', fields);
      return result;
    }
    log.warn(`handler failed; retrying in ${waitMs} ms`, fields);
    await abortableSleep(waitMs, signalOf(signal)); // an abort here makes the next executeJob answer CANCELLED at once
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
