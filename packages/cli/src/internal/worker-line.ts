import type { LogEventLevel } from '@berth/protocol/log';
import { parseJsonLogLine, prettyLine } from '@berth/protocol/internal';

/**
 * A worker's output line as berth dev shows it, and the level it was logged at (undefined: not a log line). Its
 * JSON log lines (berth dev starts workers with `BERTH_LOG_FORMAT=json`) in pretty form, `HH:MM:SS level message
 * key=value`, without `workerId` and `endpointId` (the `[<endpoint>/<worker>]` prefix names them); any other line
 * (the handler's own output outside a job, a command worker's) as it is.
 *
 * @example workerLine('{"level":30,"time":0,"pid":1,"workerId":"echo-1","jobId":"j1","msg":"job completed","ms":77}')
 * // { text: '00:00:00 info  job completed jobId=j1 ms=77', level: 'info' }
 */
export function workerLine(line: string, color = false): { text: string; level?: LogEventLevel } {
  const parsed = parseJsonLogLine(line);
  if (!parsed) return { text: line };
  const { workerId: _w, endpointId: _e, ...fields } = parsed.fields;
  return { text: prettyLine(parsed.level, parsed.time, fields, parsed.msg, color), level: parsed.level };
}
