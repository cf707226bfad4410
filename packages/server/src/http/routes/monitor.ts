import { BerthError } from '@berth/protocol';
import type { Monitor } from '../../monitor/monitor.js';
import { QUERY } from '../query.js';
import type { ApiResponse } from '../types.js';
import type { RouteContext } from './route-context.js';

/** `window` of `GET /v2/<ep>/monitor`, seconds: default and bounds (one entry of the query table). */
const MONITOR_WINDOW = QUERY.monitorWindow;

/**
 * `GET /v2/<ep>/monitor?window=<seconds>`: the endpoint's last 15 minutes (or up to an hour) in 5 s slots: jobs
 * completed and failed, cold starts, queue depth, workers by state, delay and execution p50/p95 (the playground's
 * Monitor view; docs/observability.md). Same auth and scope as `/health`.
 */
export async function monitorRoute(rc: RouteContext, monitor: Monitor): Promise<ApiResponse> {
  const raw = rc.req.query.get('window');
  let seconds: number = MONITOR_WINDOW.default;
  if (raw !== null) {
    seconds = /^\d{1,5}$/.test(raw) ? Number(raw) : Number.NaN;
    if (!(seconds >= MONITOR_WINDOW.min && seconds <= MONITOR_WINDOW.max))
      throw new BerthError(
        'invalid_request',
        `query window must be a whole number of seconds from ${MONITOR_WINDOW.min} to ${MONITOR_WINDOW.max}, got "${raw.slice(0, 40)}"`,
      );
  }
  return { status: 200, json: await monitor.read(rc.endpointId, seconds * 1000) };
}
