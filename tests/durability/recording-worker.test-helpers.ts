// A worker process for the fault tests: records every execution (job id and attempt) in EXEC_LOG before running,
// so a checker can tell jobs executed twice; sleeps `input.ms` (abortable), then echoes `input.n`.
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { start } from '@berth/worker';

const log = process.env['EXEC_LOG'];
if (!log) throw new Error('EXEC_LOG is not set');

start({
  concurrency: 8,
  handler: async (job) => {
    appendFileSync(log, `${job.id} ${job.attempt} ${process.env['BERTH_WORKER_ID'] ?? ''}\n`);
    const ms = Number(job.input['ms'] ?? 0);
    if (ms > 0) await sleep(ms, undefined, { signal: job.signal });
    const out: Record<string, unknown> = { n: job.input['n'] ?? null, worker: process.env['BERTH_WORKER_ID'] ?? '' };
    // A big input gets a big output back (both blobs past 256 KiB: issue #35).
    if (typeof job.input['pad'] === 'string' && job.input['pad'].length > 256 * 1024) out['pad'] = job.input['pad'];
    return out;
  },
});
