import type { Logger } from '@berth/protocol/log';

/** Per-job lines of the control plane that a worker berth dev runs prints itself, with more detail. */
const ECHOED = new Set(['job completed', 'job failed']);

/**
 * The control plane's logger under berth dev: its `job completed` / `job failed` lines for a worker whose output
 * berth dev shows (`printsItsOwn(workerId)`) go to debug, so each job event reads once; workers started by hand
 * (`"workers": 0`) keep them at info.
 */
export function withoutWorkerEcho(logger: Logger, printsItsOwn: (workerId: string) => boolean): Logger {
  return {
    ...logger,
    info(msg, fields) {
      const workerId = fields?.['workerId'];
      if (typeof msg === 'string' && ECHOED.has(msg) && typeof workerId === 'string' && printsItsOwn(workerId))
        logger.debug(msg, fields);
      else logger.info(msg, fields);
    },
  };
}
