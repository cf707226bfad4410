import { BerthError, ENDPOINT_ID_RE, LIMITS, toErrorBody } from '@berth/protocol';
import type { Logger } from '@berth/protocol/log';
import type { JobService } from '../jobs/job-service.js';
import type { JobBlobs } from '../blobs/job-blobs.js';
import type { WorkerRegistry } from '../workers/worker-registry.js';
import type { Authenticator } from './auth.js';
import { readBody } from './body.js';
import { OVERLOADED_RETRY_AFTER_S } from './body-budget.js';
import type { Guard, Principal } from './guard.js';
import type { RouteContext } from './routes/route-context.js';
import { run, runsync } from './routes/submit.js';
import { cancel, health, purgeQueue, retry, status, statusSync } from './routes/jobs.js';
import { stream } from './routes/stream.js';
import { openAiRoute, toOpenAiError } from './openai/index.js';
import type { ApiRequest, ApiResponse } from './types.js';
import type { ModelRoutes } from '../models/model-routes.js';
import type { Store } from '../store/types.js';
import { webhookLog } from './routes/webhook-log.js';
import { jobLogs, recentJobs } from './routes/observe.js';
import { listRequests } from './routes/requests.js';
import { scaling, type ScalingDeps } from './routes/scaling.js';
import { catalog, estimate, type CatalogDeps } from './routes/catalog.js';
import { openApi } from './openapi/route.js';
import {
  GLOBAL_ROUTES,
  QUEUE_ROUTES,
  checkMethod,
  lookup,
  type GlobalRoute,
  type QueueRoute,
  type QueueRouteName,
} from './route-table.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Monitor } from '../monitor/monitor.js';
import { monitorRoute } from './routes/monitor.js';
import { isJobToken } from '../tokens/job-token.js';
import { assertTokenRoute, type JobTokens } from '../tokens/job-tokens.js';
import { credentialOf, tokenPreflight, withTokenCors } from '../tokens/token-cors.js';
import { issueToken } from '../tokens/token-route.js';

type Handler = (rc: RouteContext, deps: ApiDeps) => Promise<ApiResponse>;

/** The handler of each route of the table (`route-table.ts`); `estimate` is answered from the model alone. */
const HANDLERS: Record<Exclude<QueueRouteName, 'estimate'>, Handler> = {
  run,
  runsync,
  status,
  'status-sync': statusSync,
  stream,
  cancel,
  retry,
  'purge-queue': purgeQueue,
  health,
  webhooks: (rc, deps) => webhookLog(rc, deps.store),
  logs: (rc, deps) => jobLogs(rc, deps.store),
  jobs: (rc, deps) => recentJobs(rc, deps.store),
  requests: (rc, deps) => listRequests(rc, deps.store),
  token: (rc) => issueToken(rc),
  scaling: (rc, deps) => {
    if (!deps.scaling) throw new BerthError('route_not_found', `no route GET ${rc.req.path}`);
    return scaling(rc, deps.scaling);
  },
  monitor: (rc, deps) => {
    if (!deps.monitor) throw new BerthError('route_not_found', `no route GET ${rc.req.path}`);
    return monitorRoute(rc, deps.monitor);
  },
};

export interface ApiDeps {
  service: JobService;
  /** Big bodies streamed to blob files (issue #35). */
  blobs: JobBlobs;
  registry: WorkerRegistry;
  keys: Authenticator;
  /** Job tokens (docs/job-tokens.md): issued on submit, accepted in place of a key on their job's routes. */
  jobTokens: JobTokens;
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
  /** A worker's big inputs and outputs (`/v2/_worker/jobs/<id>/input|output`, blobs/blob-routes.ts). */
  blobRoutes?: (req: ApiRequest) => Promise<ApiResponse | undefined> | undefined;
  /** RunPod's worker protocol (`/v2/<ep>/job-take/<worker>`, ...: `../pull/`). */
  pull?: (req: ApiRequest) => Promise<ApiResponse | undefined> | undefined;
  /** Public model slugs in place of endpoint ids. */
  models?: ModelRoutes;
  /** `GET /v2/_berth/catalog` (the playground's picker). */
  catalog?: CatalogDeps;
  /** `GET /metrics` (Prometheus text; needs an API key like every route). */
  metrics?: Metrics;
  /** `GET /v2/<ep>/monitor` (the Monitor view's history). */
  monitor?: Monitor;
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
  return { status, headers: errorHeaders(err), json: body };
}

/** The headers an error answer carries: `Allow` on a 405, `Retry-After` when overloaded. */
function errorHeaders(err: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  if (err instanceof BerthError && err.code === 'method_not_allowed' && Array.isArray(err.details))
    headers['allow'] = err.details.join(', ');
  if (err instanceof BerthError && err.code === 'overloaded') headers['retry-after'] = String(OVERLOADED_RETRY_AFTER_S);
  return headers;
}

/**
 * The HTTP API without a socket: `/v2/<endpoint_id>/<operation>[/<job_id>]`. Order of checks: draining (503),
 * route shape (404), API key or job token (401), endpoint (404), a job token's job and route (403), method (405),
 * guard (403/429), then the operation. Answers to requests carrying a job token may be read by any origin (CORS).
 * `/v2/<endpoint_id>/openai/v1/...` goes through the same checks (guard operation `openai`) to the
 * OpenAI-compatible routes of `./openai/`, with every error in the OpenAI shape.
 */
export function createApi(deps: ApiDeps): (req: ApiRequest) => Promise<ApiResponse> {
  const serve = createRoutes(deps);
  return async (req) => withTokenCors(req, await serve(req));
}

/** The caller: a job token (`Authorization`, or `?token=` on /stream) or an API key; 401 otherwise. */
function authenticate(deps: ApiDeps, req: ApiRequest, route: string | undefined): Promise<Principal> | Principal {
  const credential = credentialOf(req, route);
  if (credential !== undefined && isJobToken(credential)) return deps.jobTokens.authenticate(credential);
  return deps.keys.authenticate(req.headers['authorization']);
}

function createRoutes(deps: ApiDeps): (req: ApiRequest) => Promise<ApiResponse> {
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
      const blobAnswer = deps.blobRoutes?.(req);
      const blob = blobAnswer && (await blobAnswer);
      if (blob) return blob;
      // Also before the drain check: results of jobs finishing during a graceful shutdown are still taken.
      const pullAnswer = deps.pull?.(req);
      const pulled = pullAnswer && (await pullAnswer);
      if (pulled) return pulled;
      if (deps.draining())
        throw new BerthError('unavailable', 'the server is shutting down; retry against another replica or later');
      const page = req.method === 'GET' || req.method === 'HEAD' ? deps.playground?.(req) : undefined;
      if (page) return page;
      const preflight = tokenPreflight(req);
      if (preflight) return preflight;
      const global = globalRoute(req.path, deps);
      if (global) {
        checkMethod(req.method, global.route, global.route.name);
        return await global.serve(await deps.keys.authenticate(req.headers['authorization']));
      }
      // ['', 'v2', endpoint, op, job?]
      if (parts[0] !== '' || parts[1] !== 'v2' || parts.length < 4 || (parts.length > 5 && !openai))
        throw new BerthError('route_not_found', `no route ${req.method} ${req.path}`);
      const principal = await authenticate(deps, req, parts[3]);
      const model = deps.models?.get(parts[2]!);
      const endpointId = model ? model.endpoint : parts[2]!;
      if (!ENDPOINT_ID_RE.test(endpointId) || !deps.hasEndpoint(endpointId))
        throw new BerthError('endpoint_not_found', `endpoint ${endpointId.slice(0, 80)} not found`);
      const op = parts[3]!;
      if (principal.jobToken) assertTokenRoute(principal, endpointId, openai ? 'openai' : op, parts[4]);
      if (openai) return await serveOpenAi(deps, req, parts, principal, endpointId);
      const route: QueueRoute | undefined = lookup(QUEUE_ROUTES, op);
      const jobId = parts[4];
      if (!route || route.job !== (jobId !== undefined) || jobId === '' || (route.only === 'model' && !model))
        throw new BerthError('route_not_found', `no route ${req.method} ${req.path}`);
      checkMethod(req.method, route, op);
      const refused = deps.guard({ principal, endpointId, operation: route.operation });
      if (refused)
        return { ...error(refused.error, deps.logger, req), ...(refused.headers ? { headers: refused.headers } : {}) };
      if (op === 'estimate') return await estimate(model!, req);
      // A route without a body of its own drains what was sent and ignores it.
      if (route.doc.body === undefined && req.method === 'POST')
        await readBody(req.body, LIMITS.otherBodyBytes, req.headers['content-length']);
      const rc: RouteContext = {
        req,
        principal,
        endpointId,
        jobId: jobId ?? '',
        service: deps.service,
        blobs: deps.blobs,
        registry: deps.registry,
        tokens: deps.jobTokens,
      };
      const handler = HANDLERS[op as keyof typeof HANDLERS];
      const serve = (c: RouteContext) => handler(c, deps);
      if (model && deps.models) return await deps.models.serve(model, route.operation, rc, serve);
      return await serve(rc);
    } catch (err) {
      return openai ? openAiError(err, deps.logger, req) : error(err, deps.logger, req);
    }
  };
}

/** The route of `path` outside `/v2/<ep>/` that this server answers here (its part is configured), if any. */
function globalRoute(
  path: string,
  deps: ApiDeps,
): { route: GlobalRoute; serve: (who: Principal) => Promise<ApiResponse> } | undefined {
  const { metrics, catalog: cat } = deps;
  if (path === '/metrics' && metrics)
    return {
      route: GLOBAL_ROUTES['/metrics'],
      // A key limited to some endpoints sees only their lines.
      serve: async (who) => ({
        status: 200,
        headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
        bytes: Buffer.from(await metrics.render(who.scope?.endpoints ?? null)),
      }),
    };
  if (path === '/openapi.json' && cat)
    return { route: GLOBAL_ROUTES['/openapi.json'], serve: async (who) => openApi(who, cat) };
  if (path === '/v2/_berth/catalog' && cat)
    return { route: GLOBAL_ROUTES['/v2/_berth/catalog'], serve: (who) => catalog(who, cat) };
  return undefined;
}

function openAiError(
  err: unknown,
  logger: Logger,
  req: ApiRequest,
  headers: Record<string, string> = errorHeaders(err),
): ApiResponse {
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
  checkMethod(req.method, route, `openai/${route.name}`);
  const refused = deps.guard({ principal, endpointId, operation: 'openai' });
  if (refused) return openAiError(refused.error, deps.logger, req, refused.headers);
  return await route.handler({
    req,
    principal,
    endpointId,
    jobId: '',
    service: deps.service,
    blobs: deps.blobs,
    registry: deps.registry,
    logger: deps.logger,
  });
}
