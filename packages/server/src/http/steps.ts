import { BerthError, ENDPOINT_ID_RE, LIMITS } from '@berth/protocol';
import type { PublicModel } from '../models/types.js';
import { isJobToken } from '../tokens/job-token.js';
import { assertTokenRoute } from '../tokens/job-tokens.js';
import { credentialOf, tokenPreflight } from '../tokens/token-cors.js';
import type { ApiDeps } from './api-deps.js';
import { answerError, routeNotFound } from './answer-error.js';
import { readBody } from './body.js';
import type { Principal } from './guard.js';
import type { ApiRoute, EndpointRoute, RouteCall } from './route-types.js';
import type { ApiRequest, ApiResponse } from './types.js';

/**
 * The order of checks of every request, written once: `STEPS` below, run in this order by `api.ts` after the one
 * matcher (`router.ts`) found the request's route in the route table (`route-table.ts`). A step answers (ending
 * the request), throws (an error answer in the route's shape), or passes to the next.
 *
 *  1. draining      503 `unavailable` while shutting down, except routes marked `whileDraining` (worker reports
 *                   and uploads, /ping: jobs finishing during a graceful shutdown are still taken)
 *  2. ownChecks     routes that check their own credential and method (worker protocol, files, /ping, playground)
 *  3. preflight     `OPTIONS` on a route a job token may call: the CORS preflight (204)
 *  4. globalRoute   routes outside an endpoint (/metrics, /openapi.json, /v2/_berth/catalog): 405, API key, answer
 *  5. routeShape    no route for the path: 404 `route_not_found` (before any credential is read)
 *  6. credential    API key or job token (`Authorization`, or `?token=` on /stream): 401
 *  7. endpoint      the endpoint id or public model slug of the path is served: 404 `endpoint_not_found`
 *  8. jobToken      a job token only on its own job, endpoint and routes: 403 `job_token_not_allowed`
 *  9. knownRoute    an operation the endpoint has (not a fallback), with its ids, on a model if model-only: 404
 * 10. method        405 `method_not_allowed` with `Allow`
 * 11. guard         key scopes (403) and rate limits (429)
 * 12. unusedBody    a POST to a route that takes no body: the body is read (within limits) and ignored
 * 13. handler       the route's handler, through the public model's checks and pricing on a model slug
 */

/** What the steps know of a request, filled in as they go. */
export interface Call {
  req: ApiRequest;
  /** The request's route: its method's, else another of its path (the method step refuses it); none: 404. */
  route: ApiRoute | undefined;
  /** The route answers the request's method. */
  methodOk: boolean;
  /** The methods of the path (`Allow`). */
  allow: readonly string[];
  params: Record<string, string>;
  /** The path split at `/`. */
  segments: readonly string[];
  /** The name of the path's tail parameter, if its pattern has one. */
  tail: string | undefined;
  principal: Principal | undefined;
  endpointId: string;
  model: PublicModel | undefined;
}

type Step = (c: Call, deps: ApiDeps) => ApiResponse | undefined | Promise<ApiResponse | undefined>;

/** The endpoint route of a call past `routeShape` (the other kinds have answered by then). */
const endpointRoute = (c: Call) => c.route as EndpointRoute;

function methodNotAllowed(c: Call, name: string): BerthError {
  return new BerthError(
    'method_not_allowed',
    `${c.req.method} is not allowed on ${name}; use ${c.allow.join(' or ')}`,
    c.allow,
  );
}

const draining: Step = (c, deps) => {
  if (deps.draining() && !c.route?.whileDraining)
    throw new BerthError('unavailable', 'the server is shutting down; retry against another replica or later');
  return undefined;
};

const ownChecks: Step = (c, deps) => (c.route?.kind === 'own' ? c.route.serve(c.req, c.params, deps) : undefined);

const preflight: Step = (c) =>
  tokenPreflight(
    c.req,
    c.route?.kind === 'endpoint' && c.route.auth === 'job-token',
    c.params['ep'],
    c.params['job_id'],
  );

// Steps that do not apply to a request return at once, without a promise: an `await` per step was a visible share
// of a proxied request's CPU (bench/lb-proxy.ts).
const globalRoute: Step = (c, deps) => {
  if (c.route?.kind !== 'global') return undefined;
  const route = c.route;
  return (async () => {
    if (!c.methodOk) throw methodNotAllowed(c, route.name);
    return await route.serve(await deps.keys.authenticate(c.req.headers['authorization']), deps);
  })();
};

const routeShape: Step = (c) => {
  if (!c.route) throw routeNotFound(c.req);
  return undefined;
};

const credential: Step = (c, deps) => {
  const token = credentialOf(c.req, c.segments[3]);
  const who =
    token !== undefined && isJobToken(token)
      ? deps.jobTokens.authenticate(token)
      : deps.keys.authenticate(c.req.headers['authorization']);
  if (!(who instanceof Promise)) {
    c.principal = who;
    return undefined;
  }
  return who.then((p) => {
    c.principal = p;
    return undefined;
  });
};

const endpoint: Step = (c, deps) => {
  const target = c.params['ep']!;
  c.model = deps.models?.get(target);
  c.endpointId = c.model ? c.model.endpoint : target;
  if (!ENDPOINT_ID_RE.test(c.endpointId) || !deps.hasEndpoint(c.endpointId))
    throw new BerthError('endpoint_not_found', `endpoint ${c.endpointId.slice(0, 80)} not found`);
  return undefined;
};

const jobToken: Step = (c) => {
  const route = endpointRoute(c);
  assertTokenRoute(c.principal!, c.endpointId, c.segments[3]!, c.segments[4], route.auth === 'job-token');
  return undefined;
};

const knownRoute: Step = (c, deps) => {
  const route = endpointRoute(c);
  if (!route.serve) throw routeNotFound(c.req, route.notFound);
  // A load-balancing endpoint has no queue: its workers' routes are under /lb/ (and /health says how they are).
  if (route.operation !== 'lb' && route.operation !== 'health' && deps.lb?.has(c.endpointId))
    throw routeNotFound(
      c.req,
      `; ${c.endpointId} is a load-balancing endpoint: send requests to /v2/${c.endpointId}/lb/<path>`,
    );
  for (const name in c.params) if (c.params[name] === '' && name !== c.tail) throw routeNotFound(c.req);
  if (route.model === 'only' && !c.model) throw routeNotFound(c.req);
  return undefined;
};

const method: Step = (c) => {
  // How the message names the route: its path after the endpoint, without the job id (`status`, `openai/v1/models`).
  if (!c.methodOk)
    throw methodNotAllowed(
      c,
      endpointRoute(c)
        .path.slice('/v2/:ep/'.length)
        .replace(/\/:job_id$/, ''),
    );
  return undefined;
};

const guard: Step = (c, deps) => {
  const route = endpointRoute(c);
  const refused = deps.guard({
    principal: c.principal!,
    endpointId: c.endpointId,
    operation: route.operation,
    ...(route.read ? { read: true } : {}),
  });
  if (!refused) return undefined;
  return answerError(refused.error, route.errors ?? 'berth', deps.logger, c.req, refused.headers);
};

const unusedBody: Step = (c) => {
  const route = endpointRoute(c);
  if (route.doc?.body === undefined && !route.rawBody && c.req.method === 'POST')
    return readBody(c.req.body, LIMITS.otherBodyBytes, c.req.headers['content-length']).then(() => undefined);
  return undefined;
};

const handler: Step = (c, deps) => {
  const route = endpointRoute(c);
  const serve = route.serve!;
  const rc: RouteCall = {
    req: c.req,
    principal: c.principal!,
    endpointId: c.endpointId,
    jobId: c.params['job_id'] ?? '',
    service: deps.service,
    blobs: deps.blobs,
    registry: deps.registry,
    tokens: deps.jobTokens,
    params: c.params,
    model: c.model,
    logger: deps.logger,
  };
  if (c.model && deps.models && (route.model ?? 'wrapped') === 'wrapped')
    return deps.models.serve(c.model, route.operation, rc, (next) => serve({ ...rc, ...next }, deps));
  return serve(rc, deps);
};

/** The checks of every request, in order (see the header). */
export const STEPS: readonly Step[] = [
  draining,
  ownChecks,
  preflight,
  globalRoute,
  routeShape,
  credential,
  endpoint,
  jobToken,
  knownRoute,
  method,
  guard,
  unusedBody,
  handler,
];
