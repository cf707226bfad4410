import { BerthError, ENDPOINT_ID_RE, LIMITS, toErrorBody } from '@berth/protocol';
import type { JobService } from '../jobs/job-service.js';
import type { Logger } from '../logger.js';
import type { WorkerRegistry } from '../ws/worker-registry.js';
import type { Authenticator } from './auth.js';
import { readBody } from './body.js';
import { OVERLOADED_RETRY_AFTER_S } from './body-budget.js';
import type { Guard, Operation, Principal } from './guard.js';
import type { RouteContext } from './routes/route-context.js';
import { run, runsync } from './routes/submit.js';
import { cancel, health, purgeQueue, retry, status, statusSync } from './routes/jobs.js';
import { stream } from './routes/stream.js';
import { openAiRoute, toOpenAiError } from './openai/index.js';
import type { ApiRequest, ApiResponse } from './types.js';
import type { ModelRoutes } from '../models/model-routes.js';
import type { Store } from '../store/types.js';
import { webhookLog } from '../webhooks/webhook-log-route.js';
import { jobLogs, recentJobs } from './routes/observe.js';
import { scaling, type ScalingDeps } from './routes/scaling.js';
import { catalog, estimate, type CatalogDeps } from './routes/catalog.js';
import { openApi } from './openapi/route.js';
import type { Metrics, MetricsSource } from '../metrics/metrics.js';

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
  keys: Authenticator;
  /** For the webhook delivery log route. */
  store: Store;
  guard: Guard;
  /** Whether an endpoint id is served. */
  hasEndpoint(id: string): boolean;
  /** True while shutting down: every request answers 503. */
  draining(): boolean;
  logger: Logger;
  /**
   * Worker uploads and signed downloads of output files (`/v2/_worker/files/...`, `/files/...`). Answers
   * undefined at once (no promise) for other paths, as `pull` does: two awaits less on every other request.
   */
  files?: (req: ApiRequest) => Promise<ApiResponse | undefined> | undefined;
  /** RunPod's worker protocol (`/v2/<ep>/job-take/<worker>`, ...: `../pull/`). */
  pull?: (req: ApiRequest) => Promise<ApiResponse | undefined> | undefined;
  /** Public model slugs in place of endpoint ids. */
  models?: ModelRoutes;
  /** `GET /v2/_berth/catalog` (the playground's picker). */
  catalog?: CatalogDeps;
  /** `GET /metrics` (Prometheus text; needs an API key like every route). */
  metrics?: { metrics: Metrics; source: MetricsSource };
  /** `GET /v2/<ep>/scaling` (KEDA): endpoints' scaling policies. */
  scaling?: ScalingDeps;
  /** The playground page: `GET /` and `GET /playground/<file>` (no key needed; the page asks for one). */
  playground?: (req: ApiRequest) => ApiResponse | undefined;
}

function error(err: unknown, logger: Logger, req: ApiRequest): ApiResponse {
  const { status, body } = toErrorBody(err);
  if (status >= 500)
    logger.error('request failed', {
      method: req.method,
      path: req.path,
      err: err instanceof Error ? err.stack : String(err),
    });
  const headers: Record<string, string> = {};
  if (err instanceof BerthError && err.code === 'method_not_allowed' && Array.isArray(err.details))
    headers['allow'] = err.details.join(', ');
  if (err instanceof BerthError && err.code === 'overloaded') headers['retry-after'] = String(OVERLOADED_RETRY_AFTER_S);
  return { status, headers, json: body };
}

/**
 * The HTTP API without a socket: `/v2/<endpoint_id>/<operation>[/<job_id>]`. Order of checks: draining (503),
 * route shape (404), API key (401), endpoint (404), method (405), guard (403/429), then the operation.
 * `/v2/<endpoint_id>/openai/v1/...` goes through the same checks (guard operation `openai`) to the
 * OpenAI-compatible routes of `./openai/`, with every error in the OpenAI shape.
 */
export function createApi(deps: ApiDeps): (req: ApiRequest) => Promise<ApiResponse> {
  const routes: Record<string, Route> = {
    ...ROUTES,
    webhooks: { methods: ['GET'], operation: 'status', job: true, handler: (rc) => webhookLog(rc, deps.store) },
    logs: { methods: ['GET'], operation: 'status', job: true, handler: (rc) => jobLogs(rc, deps.store) },
    jobs: { methods: ['GET'], operation: 'status', job: false, handler: (rc) => recentJobs(rc, deps.store) },
    ...(deps.scaling
      ? { scaling: { methods: ['GET'], operation: 'health', job: false, handler: (rc) => scaling(rc, deps.scaling!) } }
      : {}),
  };
  return async (req) => {
    const parts = req.path.split('/');
    // `/v2/<ep>/openai/v1/...` (docs/openai.md): same checks, errors in the OpenAI shape.
    const openai = parts[1] === 'v2' && parts[3] === 'openai' && parts.length > 4;
    try {
      if (req.path === '/ping') return { status: 200, json: { status: 'ok' } };
      // Before the drain check: jobs finishing during a graceful shutdown still upload their outputs.
      const fileAnswer = deps.files?.(req);
      const file = fileAnswer && (await fileAnswer);
      if (file) return file;
      // Also before the drain check: results of jobs finishing during a graceful shutdown are still taken.
      const pullAnswer = deps.pull?.(req);
      const pulled = pullAnswer && (await pullAnswer);
      if (pulled) return pulled;
      if (deps.draining())
        throw new BerthError('unavailable', 'the server is shutting down; retry against another replica or later');
      const page = req.method === 'GET' || req.method === 'HEAD' ? deps.playground?.(req) : undefined;
      if (page) return page;
      if (req.path === '/metrics' && deps.metrics) {
        if (req.method !== 'GET')
          throw new BerthError('method_not_allowed', `${req.method} is not allowed on /metrics; use GET`, ['GET']);
        // A key limited to some endpoints sees only their lines.
        const who = await deps.keys.authenticate(req.headers['authorization']);
        const text = await deps.metrics.metrics.render(deps.metrics.source, who.scope?.endpoints ?? null);
        return {
          status: 200,
          headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
          bytes: Buffer.from(text),
        };
      }
      if (req.path === '/openapi.json' && deps.catalog) {
        if (req.method !== 'GET')
          throw new BerthError('method_not_allowed', `${req.method} is not allowed on /openapi.json; use GET`, ['GET']);
        return openApi(await deps.keys.authenticate(req.headers['authorization']), deps.catalog);
      }
      if (req.path === '/v2/_berth/catalog' && deps.catalog) {
        if (req.method !== 'GET')
          throw new BerthError('method_not_allowed', `${req.method} is not allowed on the catalog; use GET`, ['GET']);
        return await catalog(await deps.keys.authenticate(req.headers['authorization']), deps.catalog);
      }
      // ['', 'v2', endpoint, op, job?]
      if (parts[0] !== '' || parts[1] !== 'v2' || parts.length < 4 || (parts.length > 5 && !openai))
        throw new BerthError('route_not_found', `no route ${req.method} ${req.path}`);
      const principal = await deps.keys.authenticate(req.headers['authorization']);
      const model = deps.models?.get(parts[2]!);
      const endpointId = model ? model.endpoint : parts[2]!;
      if (!ENDPOINT_ID_RE.test(endpointId) || !deps.hasEndpoint(endpointId))
        throw new BerthError('endpoint_not_found', `endpoint ${endpointId.slice(0, 80)} not found`);
      const op = parts[3]!;
      if (openai) return await serveOpenAi(deps, req, parts, principal, endpointId);
      if (op === 'estimate' && model && parts.length === 4) {
        if (req.method !== 'POST')
          throw new BerthError('method_not_allowed', `${req.method} is not allowed on estimate; use POST`, ['POST']);
        const refused = deps.guard({ principal, endpointId, operation: 'status' });
        if (refused)
          return {
            ...error(refused.error, deps.logger, req),
            ...(refused.headers ? { headers: refused.headers } : {}),
          };
        return await estimate(model, req);
      }
      const route = Object.hasOwn(routes, op) ? routes[op] : undefined;
      const jobId = parts[4];
      if (!route || route.job !== (jobId !== undefined) || jobId === '') {
        throw new BerthError('route_not_found', `no route ${req.method} ${req.path}`);
      }
      if (!route.methods.includes(req.method))
        throw new BerthError(
          'method_not_allowed',
          `${req.method} is not allowed on ${op}; use ${route.methods.join(' or ')}`,
          route.methods,
        );
      const refused = deps.guard({ principal, endpointId, operation: route.operation });
      if (refused)
        return { ...error(refused.error, deps.logger, req), ...(refused.headers ? { headers: refused.headers } : {}) };
      if (route.operation !== 'run' && route.operation !== 'runsync' && req.method === 'POST') {
        await readBody(req.body, LIMITS.otherBodyBytes, req.headers['content-length']); // drained and ignored
      }
      const rc: RouteContext = {
        req,
        principal,
        endpointId,
        jobId: jobId ?? '',
        service: deps.service,
        registry: deps.registry,
      };
      if (model && deps.models) return await deps.models.serve(model, route.operation, rc, route.handler);
      return await route.handler(rc);
    } catch (err) {
      return openai ? openAiError(err, deps.logger, req) : error(err, deps.logger, req);
    }
  };
}

function openAiError(err: unknown, logger: Logger, req: ApiRequest, headers: Record<string, string> = {}): ApiResponse {
  const { status, body } = toOpenAiError(err);
  if (status >= 500)
    logger.error('request failed', {
      method: req.method,
      path: req.path,
      err: err instanceof Error ? err.stack : String(err),
    });
  return { status, headers, json: body };
}

async function serveOpenAi(
  deps: ApiDeps,
  req: ApiRequest,
  parts: string[],
  principal: Principal,
  endpointId: string,
): Promise<ApiResponse> {
  const route = openAiRoute(parts.slice(4));
  if (!route)
    throw new BerthError(
      'route_not_found',
      `no route ${req.method} ${req.path}; the OpenAI routes are v1/chat/completions, v1/completions and v1/models`,
    );
  if (!route.methods.includes(req.method))
    throw new BerthError(
      'method_not_allowed',
      `${req.method} is not allowed here; use ${route.methods.join(' or ')}`,
      route.methods,
    );
  const refused = deps.guard({ principal, endpointId, operation: 'openai' });
  if (refused) return openAiError(refused.error, deps.logger, req, refused.headers);
  return await route.handler({
    req,
    principal,
    endpointId,
    jobId: '',
    service: deps.service,
    registry: deps.registry,
    logger: deps.logger,
  });
}
