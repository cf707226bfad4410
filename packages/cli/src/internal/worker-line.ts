/** A line of the worker runtime's logger: `<level> <ISO time> worker=<id> <message>`. */
const WORKER_LOG = /^(debug|info|warn|error)(\s+)\d{4}-\d\d-\d\dT(\d\d:\d\d:\d\d)\.\d+Z worker=\S+ (.*)$/;

/**
 * A worker's output line as berth dev shows it after the `[<endpoint>/<worker>]` prefix: its log lines in the
 * control plane's format (`HH:MM:SS level message`, UTC like the control plane's), without the `worker=` field the
 * prefix already gives; any other line as it is.
 *
 * @example workerLine('info  2026-11-24T19:17:54.359Z worker=echo-1 job=j1 job completed {"ms":77}')
 * // '19:17:54 info  job=j1 job completed {"ms":77}'
 */
export function workerLine(line: string): string {
  const m = WORKER_LOG.exec(line);
  return m ? `${m[3]} ${m[1]}${m[2]}${m[4]}` : line;
}
