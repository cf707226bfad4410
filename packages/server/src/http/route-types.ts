import type { Logger } from '@berth/protocol/log';
import type { PublicModel } from '../models/types.js';
import type { ApiDeps } from './api-deps.js';
import type { Operation, Principal } from './guard.js';
import type { IntQuery } from './query.js';
import type { RouteContext } from './routes/route-context.js';
import type { ApiRequest, ApiResponse } from './types.js';

/** The shapes of the route table's entries (`route-table.ts`); the steps that use them are in `steps.ts`. */

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD' | 'PATCH' | 'OPTIONS';

/** A query parameter the OpenAPI document shows but no `intParam` reads (the `/files` signature). */
export interface PlainQuery {
  name: string;
  type: 'integer' | 'string';
  description: string;
}

/** What the OpenAPI document says of a route beyond its path and methods. */
export interface RouteDoc {
  /** operationId (per target, the target's id is appended). */
  id: string;
  summary: string;
  /** Query parameters the route reads (bounds and defaults as the route applies them). */
  query?: readonly (IntQuery | PlainQuery)[];
  /** The request body: `job` is the JobRequest with the target's input schema, `object` any JSON object. */
  body?: 'job' | 'object';
  /**
   * The 200 answer: a component schema name of the document, `object` (any JSON object) or `estimate`; with
   * `media`, the description of the non-JSON answer.
   */
  reply: string;
  /** Also answers server-sent events (`Accept: text/event-stream` or `stream: true`). */
  sse?: boolean;
  /** The reply's media type when not JSON. */
  media?: 'text/plain' | 'text/html' | 'application/octet-stream';
  /** Shown under endpoints only, not public models (the OpenAI routes). */
  endpointsOnly?: boolean;
}

/** What an endpoint route's handler gets: the route context, the path's parameters, the model if a slug named it. */
export interface RouteCall extends RouteContext {
  params: Readonly<Record<string, string>>;
  /** The public model when the path named a model slug (`endpointId` is then its endpoint). */
  model: PublicModel | undefined;
  logger: Logger;
}

interface RouteBase {
  /** `/literal/:param/*tail` (`router.ts`). */
  path: string;
  /** The methods it answers (and the `Allow` of a 405); HEAD is not shown in the OpenAPI document. */
  methods: readonly Method[];
  /** Its part of the OpenAPI document; none: not shown (worker routes, the fallbacks). */
  doc?: RouteDoc;
  /** Still answered while the server drains (shuts down); otherwise 503 `unavailable`. */
  whileDraining?: boolean;
  /** Served only when this answers true for the server's parts (e.g. `/metrics` with metrics). */
  when?: (deps: ApiDeps) => boolean;
}

/**
 * A route of one endpoint or public model, `/v2/:ep/...`. Checks before its handler: API key or job token,
 * endpoint, job token's job and route, route, method, guard (`steps.ts`).
 */
export interface EndpointRoute extends RouteBase {
  kind: 'endpoint';
  /** `key`: an API key; `job-token`: also a job token of the job in the path (docs/job-tokens.md). */
  auth: 'key' | 'job-token';
  /** What rate limits and key scopes count it as (`guard.ts`). */
  operation: Operation;
  /** A read that a read-only key may call though its operation also writes (`batch`'s GETs). */
  read?: true;
  /**
   * On a public model slug: `wrapped` (default) goes through the model's checks and pricing (`models/`),
   * `direct` does not, `only` is served on model slugs only (and answered from the model alone).
   */
  model?: 'wrapped' | 'direct' | 'only';
  /** Errors in the OpenAI shape (`openai/errors.ts`). */
  errors?: 'openai';
  /** No handler: a fallback for paths of this shape that no route has, 404 `route_not_found` after the key. */
  serve?: (rc: RouteCall, deps: ApiDeps) => Promise<ApiResponse>;
  /** A fallback's 404 message after `no route <METHOD> <path>`. */
  notFound?: string;
  /** Its handler reads the request body itself, as a stream (the load-balancing proxy): never drained before it. */
  rawBody?: true;
}

/** A route outside `/v2/<ep>/` that needs an API key: the method is checked first, then the key. */
export interface GlobalRoute extends RouteBase {
  kind: 'global';
  auth: 'key';
  /** How a 405 names it. */
  name: string;
  serve: (who: Principal, deps: ApiDeps) => Promise<ApiResponse> | ApiResponse;
}

/**
 * A route whose handler does its own checks, in its own order: `worker` routes check the worker token (the
 * worker protocol names the credential before the method), `none` needs no credential (liveness, the playground,
 * signed file URLs). Every method reaches the handler; `methods` is what it answers.
 */
export interface OwnRoute extends RouteBase {
  kind: 'own';
  auth: 'worker' | 'none';
  serve: (req: ApiRequest, params: Readonly<Record<string, string>>, deps: ApiDeps) => Promise<ApiResponse>;
}

export type ApiRoute = EndpointRoute | GlobalRoute | OwnRoute;
