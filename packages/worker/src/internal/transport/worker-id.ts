import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

export { WORKER_ID_RE } from '@berth/protocol';

/**
 * The default worker id: `<hostname>-<pid>-<random4>`, with characters the wire does not allow replaced by `-`.
 *
 * @example defaultWorkerId() // 'gpu-box-4121-9f2c'
 */
export function defaultWorkerId(host: string = hostname(), pid: number = process.pid): string {
  const safeHost = host.replace(/[^A-Za-z0-9._:-]/g, '-').slice(0, 100) || 'worker';
  return `${safeHost}-${pid}-${randomBytes(2).toString('hex')}`;
}
