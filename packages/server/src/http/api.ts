import { BerthError, ENDPOINT_ID_RE, LIMITS, toErrorBody } from '@berth/protocol';
import type { JobService } from '../jobs/job-service.js';
import type { Logger } from '../logger.js';
import type { WorkerRegistry } from '../ws/worker-registry.js';
import type { KeyChecker } from './auth.js';
import { readBody } from './body.js';
import type { Guard, Operation } from './guard.js';
import type { RouteContext } from './routes/route-context.js';
import { run, runsync } from './routes/submit.js';
import { cancel, health, purgeQueue, retry, status, statusSync } from './routes/jobs.js';
import { stream } from './routes/stream.js';
import type { ApiRequest, ApiResponse } from './types.js';

interface Route {
  methods: readonly string[];
  operation: Operation;
  /** Takes a `<job_id>` segment. */
  job: boolean;
  handler: (rc: RouteContext) => Promise<ApiResponse>;
}

const GET_POST = ['GET', 'POST'] as const;
const ROUTES: Record<string, Route> = {
  run: { methods: ['POST'], operation: 'run', job: false, handler: run },
  runsync: { methods: ['POST'], operation: 'runsync', job: false, handler: runsync },
  status: { methods: GET_POST, operation: 'status', job: true, handler: status },
  'status-sync': { methods: GET_POST, operation: 'status', job: true, handler: statusSync },
  stream: { methods: GET_POST, operation: 'stream', job: true, handler: stream },
  cancel: { methods: ['POST'], operation: 'cancel', job: true, handler: cancel },
  retry: { methods: ['POST'], operation: 'retry', job: true, handler: retry },
  'purge-queue': { methods: ['POST'], operation: 'purge-queue', job: false, handler: purgeQueue },
  health: { methods: ['GET'], operation: 'health', job: false, handler: health },
};

export interface ApiDeps {
  service: JobService;
  registry: WorkerRegistry;
  keys: KeyChecker;
  guard: Guard;
  /** Whether an endpoint id is served. */
  hasEndpoint(id: string): boolean;
  /** True while shutting down: every request answers 503. */
  draining(): boolean;
  logger: Logger;
}

function error(err: unknown, logger: Logger, req: ApiRequest): ApiResponse {
  const { status, body } = toErrorBody(err);
  if (status >= 500) logger.error('request failed', { method: req.method, path: req.path, err: err instanceof Error ? err.stack : String(err) });
  const headers: Record<string, string> = {};
  if (err instanceof BerthError && err.code === 'method_not_allowed' && Array.isArray(err.details)) headers['allow'] = err.details.join(', ');
  return { status, headers, json: body };
}

/**
 * The HTTP API without a socket: `/v2/<endpoint_id>/<operation>[/<job_id>]`. Order of checks: draining (503),
 * route shape (404), API key (401), endpoint (404), method (405), guard (403/429), then the operation.
 */
export function createApi(deps: ApiDeps): (req: ApiRequest) => Promise<ApiResponse> {
  return async (req) => {
    try {
      if (req.path === '/ping') return { status: 200, json: { status: 'ok' } };
      if (deps.draining()) throw new BerthError('unavailable', 'the server is shutting down; retry against another replica or later');
      const parts = req.path.split('/');
      // ['', 'v2', endpoint, op, job?]
      if (parts[0] !== '' || parts[1] !== 'v2' || parts.length < 4 || parts.length > 5) throw new BerthError('route_not_found', `no route ${req.method} ${req.path}`);
      const principal = deps.keys.authenticate(req.headers['authorization']);
      const endpointId = parts[2]!;
      if (!ENDPOINT_ID_RE.test(endpointId) || !deps.hasEndpoint(endpointId)) throw new BerthError('endpoint_not_found', `endpoint ${endpointId.slice(0, 80)} not found`);
      const op = parts[3]!;
      const route = Object.hasOwn(ROUTES, op) ? ROUTES[op] : undefined;
      const jobId = parts[4];
      if (!route || route.job !== (jobId !== undefined) || jobId === '') {
        throw new BerthError('route_not_found', `no route ${req.method} ${req.path}`);
      }
      if (!route.methods.includes(req.method)) throw new BerthError('method_not_allowed', `${req.method} is not allowed on ${op}; use ${route.methods.join(' or ')}`, route.methods);
      const refused = deps.guard({ principal, endpointId, operation: route.operation });
      if (refused) return { ...error(refused.error, deps.logger, req), ...(refused.headers ? { headers: refused.headers } : {}) };
      if (route.operation !== 'run' && route.operation !== 'runsync' && req.method === 'POST') {
        await readBody(req.body, LIMITS.otherBodyBytes, req.headers['content-length']); // drained and ignored
      }
      return await route.handler({ req, principal, endpointId, jobId: jobId ?? '', service: deps.service, registry: deps.registry });
    } catch (err) {
      return error(err, deps.logger, req);
    }
  };
}
