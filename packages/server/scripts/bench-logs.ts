/**
 * What the per-job log lines cost at `info`, in µs of CPU per job, without the rest of the job path (a loaded
 * machine makes throughput ratios noisy; this figure is not). Per job: the control plane's `job completed` line,
 * and the worker's child logger for the job, `job received` and `job completed` (3 JSON lines); against the same
 * calls at `--log-level warn` (nothing written). 50 jobs per event-loop turn (as at c=50), so the lines of a turn
 * go out in one write. Lines go to stderr: run with `2>/dev/null` (or `2>file`, or `2>&1 | cat` for a pipe).
 *
 *   node --import tsx packages/server/scripts/bench-logs.ts 2>/dev/null
 */
import { setImmediate as turn } from 'node:timers/promises';
import { createLogger, type LogLevel } from '@berth/protocol/log';

async function perJobUs(level: LogLevel, jobs: number): Promise<number> {
  const server = createLogger({ level });
  const worker = createLogger({ level }).child({ workerId: 'echo-1', endpointId: 'echo' });
  const t0 = process.cpuUsage();
  for (let i = 0; i < jobs; i++) {
    const jobId = `8f2c1d3e-0a6b-4c2d-9e8f-${String(i).padStart(12, '0')}-u1`;
    const job = worker.child({ jobId, attempt: 1 });
    job.info('job received');
    job.info('job completed', { ms: 3 });
    server.info('job completed', { jobId, endpointId: 'echo', workerId: 'echo-1', attempt: 1 });
    if (i % 50 === 49) await turn();
  }
  await turn();
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / jobs;
}

const JOBS = 100_000;
await perJobUs('info', 20_000); // warm-up
await perJobUs('warn', 20_000);
const rows: [string, number][] = [];
for (let round = 0; round < 3; round++) {
  rows.push(['info', await perJobUs('info', JOBS)], ['warn', await perJobUs('warn', JOBS)]);
}
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const info = median(rows.filter(([l]) => l === 'info').map(([, v]) => v));
const warn = median(rows.filter(([l]) => l === 'warn').map(([, v]) => v));
process.stdout.write(
  `per job, 3 JSON lines at info: ${info.toFixed(2)} µs CPU; at warn (none written): ${warn.toFixed(2)} µs; ` +
    `cost of the lines: ${(info - warn).toFixed(2)} µs/job\n`,
);
