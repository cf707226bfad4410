import type { ApiDeps } from './api-deps.js';
import { answerError } from './answer-error.js';
import { ROUTES } from './route-table.js';
import type { ApiRoute } from './route-types.js';
import { Router } from './router.js';
import { STEPS, type Call } from './steps.js';
import type { ApiRequest, ApiResponse } from './types.js';
import { withTokenCors } from '../tokens/token-cors.js';
import { routeByHost } from '../lb/lb-route.js';

export type { ApiDeps } from './api-deps.js';

/**
 * The HTTP API without a socket. Every route is an entry of the route table (`route-table.ts`), matched by one
 * matcher (`router.ts`, loaded with the routes whose parts `deps` has); every request then goes through the
 * checks of `steps.ts`, in the order listed there (draining, own checks of worker routes, preflight, routes
 * outside an endpoint, route shape, API key or job token, endpoint, job token's route, route, method, guard,
 * unused body, handler). Errors on the OpenAI routes are in the OpenAI shape. Answers to requests carrying a job
 * token may be read by any origin (CORS).
 */
export function createApi(deps: ApiDeps): (req: ApiRequest) => Promise<ApiResponse> {
  const router = new Router<ApiRoute>();
  for (const route of ROUTES) if (!route.when || route.when(deps)) router.add(route.methods, route.path, route);
  return async (req) => {
    // `<ep>.<lbDomain>/<path>` is `/v2/<ep>/lb/<path>` (load-balancing endpoints, docs/load-balancing.md).
    if (deps.lbDomain !== undefined) routeByHost(req, deps.lbDomain);
    const found = router.match(req.path);
    const routes = found?.routes;
    const own = routes?.byMethod.get(req.method) ?? routes?.any;
    const c: Call = {
      req,
      route: own ?? routes?.first,
      methodOk: own !== undefined,
      allow: routes?.allow ?? [],
      params: found?.params ?? {},
      segments: found?.segments ?? [],
      tail: found?.tail,
      principal: undefined,
      endpointId: '',
      model: undefined,
    };
    let res: ApiResponse | undefined;
    try {
      for (const step of STEPS) {
        const answer = step(c, deps);
        res = answer instanceof Promise ? await answer : answer;
        if (res) break;
      }
    } catch (err) {
      const shape = c.route?.kind === 'endpoint' && c.route.errors === 'openai' ? 'openai' : 'berth';
      res = answerError(err, shape, deps.logger, req);
    }
    return withTokenCors(req, res!);
  };
}
