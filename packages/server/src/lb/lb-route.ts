import { BerthError, ENDPOINT_ID_RE, toErrorBody } from '@berth/protocol';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import type { RouteCall } from '../http/route-types.js';
import type { LbService } from './lb-service.js';

/** The segment of `/v2/<ep>/lb/<path>` that marks a load-balanced request. */
export const LB_SEGMENT = 'lb';

/**
 * Host-based routing (`lbDomain`): a request to `<ep>.<domain>[:port]/<path>` is served as `/v2/<ep>/lb/<path>`,
 * so a client written for RunPod's `https://<ENDPOINT_ID>.api.runpod.ai/<path>` only changes its base URL. The
 * request's path is rewritten in place; false when the host is not such a name.
 */
export function routeByHost(req: ApiRequest, domain: string): boolean {
  const host = req.headers['host']?.toLowerCase().replace(/:\d+$/, '');
  if (!host?.endsWith(`.${domain}`)) return false;
  const ep = host.slice(0, -domain.length - 1);
  if (!ENDPOINT_ID_RE.test(ep)) return false;
  req.path = `/v2/${ep}/${LB_SEGMENT}${req.path}`;
  return true;
}

/**
 * The handler of `ANY /v2/<ep>/lb[/<path>]` (after the API key, endpoint, method and guard steps: operation `lb`):
 * the proxy. A queue endpoint has no such route.
 */
export async function serveLb(rc: RouteCall, lb: LbService | undefined): Promise<ApiResponse> {
  const { req, endpointId } = rc;
  if (!lb?.has(endpointId))
    throw new BerthError(
      'route_not_found',
      `endpoint ${endpointId} is not a load-balancing endpoint ("type": "http"); its routes are /run, /runsync, ...`,
    );
  // `/v2/<ep>/lb`: `<ep>` as the path has it (an endpoint id or a model slug).
  const prefix = '/v2/'.length + rc.params['ep']!.length + 1 + LB_SEGMENT.length;
  try {
    return await lb.serve(req, endpointId, req.path.slice(prefix) || '/');
  } catch (err) {
    // A worker lost or too slow is the worker's story, told in one line (no stack); a client gone hears nothing.
    if (!(err instanceof BerthError) || err.status < 500) throw err;
    if (req.signal?.aborted) return { status: 499, json: {} };
    if (err.code === 'worker_lost' || err.code === 'processing_timeout')
      rc.logger.warn(err.message, { endpointId, code: err.code, path: req.path });
    const { status, body } = toErrorBody(err);
    return { status, json: body };
  }
}
