import { WORKER_WS_PATH } from '@berth/protocol';

/**
 * Where `uploadOutput` sends files when no S3 bucket is configured: the control plane this worker is connected
 * to, authenticated with the worker token. The runtime attaches it to each job under a symbol key, so it stays
 * out of `JSON.stringify(job)`, logs and spreads.
 */
export interface OutputTarget {
  /** `http(s)://host:port[/prefix]` of the control plane. */
  baseUrl: string;
  /** The worker token. */
  token: string;
}

/** The symbol key under which a job carries its `OutputTarget` (registered, so duplicate copies agree). */
export const OUTPUT_TARGET: unique symbol = Symbol.for('berth.worker.outputTarget') as never;

/**
 * The control plane's HTTP base from the worker WebSocket URL.
 *
 * @example httpBaseOf('wss://b.example.com/x/v2/_worker/ws') // 'https://b.example.com/x'
 */
export function httpBaseOf(wsUrl: string): string {
  const u = new URL(wsUrl);
  u.protocol = u.protocol === 'wss:' ? 'https:' : u.protocol === 'ws:' ? 'http:' : u.protocol;
  if (u.pathname.endsWith(WORKER_WS_PATH)) u.pathname = u.pathname.slice(0, -WORKER_WS_PATH.length);
  u.search = '';
  u.hash = '';
  return u.toString().replace(/\/+$/, '');
}

/** Attaches the target to a job object (non-enumerable). */
export function attachOutputTarget(job: object, target: OutputTarget | undefined): void {
  if (target) Object.defineProperty(job, OUTPUT_TARGET, { value: target, enumerable: false });
}

/** The target a job carries, if any. */
export function outputTargetOf(job: object): OutputTarget | undefined {
  return (job as { [OUTPUT_TARGET]?: OutputTarget })[OUTPUT_TARGET];
}
