import { READ_ONLY_OPERATIONS } from '../../keys/scope-guard.js';
import type { IntQuery } from '../query.js';
import type { ApiRoute, Method, PlainQuery, RouteDoc } from '../route-types.js';
import { protocolSchemas, SERVER_VERSION, withoutDialect, type JsonSchema } from './schemas.js';

/** An endpoint or public model the caller may use, with the input schema it announced (if any). */
export interface OpenApiTarget {
  /** The path segment: endpoint id or model slug. */
  id: string;
  kind: 'endpoint' | 'model';
  inputSchema?: JsonSchema | null | undefined;
  description?: string | undefined;
}

export interface OpenApiOptions {
  targets: readonly OpenApiTarget[];
  /** A read-only key: only the routes it may call (status, stream, health, logs, jobs, token, estimate). */
  readOnly: boolean;
  /** The route table (`../route-table.ts`): the routes with a `doc`. */
  routes: readonly ApiRoute[];
}

type Operation = Record<string, unknown>;
type Paths = Record<string, Partial<Record<Lowercase<Method>, Operation>>>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const ERRORS = {
  '4XX': json(ref('Error'), 'An error with a stable code (docs/errors.md)'),
  '5XX': json(ref('Error'), 'Server error or shutting down'),
};
const anyObject = { type: 'object' };

/** Schema component names allow letters, digits, `.`, `-` and `_` (endpoint ids and slugs fit). */
const inputName = (t: OpenApiTarget) => `input.${t.id}`;

/** A query parameter with the bounds and default the route applies (`../query.ts`). */
function queryParam(q: IntQuery | PlainQuery) {
  const schema: JsonSchema =
    'min' in q
      ? { type: 'integer', minimum: q.min, maximum: q.max, ...(q.default === undefined ? {} : { default: q.default }) }
      : { type: q.type };
  const bounds = 'min' in q ? ` (${q.min}..${q.max}${q.default === undefined ? '' : `, default ${q.default}`})` : '';
  return { name: q.name, in: 'query', required: false, description: `${q.description}${bounds}`, schema };
}

/** The operation of one route of the table; `target` fills in the input schema of `body: 'job'` routes. */
function operation(
  doc: RouteDoc,
  opts: { id: string; tag: string; target?: OpenApiTarget; pathParams: readonly string[] },
): Operation {
  const input = opts.target ? ref(inputName(opts.target)) : anyObject;
  const reply =
    doc.reply === 'object'
      ? anyObject
      : doc.reply === 'estimate'
        ? { type: 'object', properties: { cost: { type: 'number' }, input } }
        : ref(doc.reply);
  const content: Record<string, unknown> = doc.media
    ? {
        [doc.media]: {
          schema: doc.media === 'application/octet-stream' ? { type: 'string', format: 'binary' } : { type: 'string' },
        },
      }
    : { 'application/json': { schema: reply } };
  if (doc.sse)
    content['text/event-stream'] = {
      schema: { type: 'string', description: 'server-sent events: data: {"output": chunk} ... event: done' },
    };
  const params = [
    ...opts.pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
    ...(doc.query ?? []).map(queryParam),
  ];
  const body =
    doc.body === 'job'
      ? { allOf: [ref('JobRequest'), { type: 'object', properties: { input } }] }
      : doc.body === 'object'
        ? anyObject
        : undefined;
  return {
    operationId: opts.id,
    summary: doc.summary,
    tags: [opts.tag],
    ...(params.length ? { parameters: params } : {}),
    ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: body } } } } : {}),
    responses: { '200': { description: doc.media ? doc.reply : 'OK', content }, ...ERRORS },
  };
}

/** A pattern as an OpenAPI path (`:name` and `*name` as `{name}`), and its parameters. */
function openApiPath(pattern: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = pattern.replace(/[:*]([A-Za-z_]+)/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path, params };
}

/**
 * Adds the documented methods of `routes` (all on one path) to `paths[path]`: each method its own operation, its
 * id the doc's with `suffix`, and `_<method>` on GET beside POST (and on any other method beside others).
 */
function addPath(
  paths: Paths,
  path: string,
  routes: readonly ApiRoute[],
  op: (r: ApiRoute, m: Method, idSuffix: string) => Operation,
) {
  const documented = routes.flatMap((r) => r.methods.filter((m) => m !== 'HEAD').map((m) => [r, m] as const));
  const methods = documented.map(([, m]) => m);
  const entry = (paths[path] ??= {});
  for (const [r, m] of documented) {
    const suffix =
      m === 'POST' || methods.length === 1 || (m === 'GET' && !methods.includes('POST')) ? '' : `_${m.toLowerCase()}`;
    entry[m.toLowerCase() as Lowercase<Method>] = op(r, m, suffix);
  }
}

/** The documented routes of the table grouped by path pattern, in table order. */
function byPath(routes: readonly ApiRoute[], endpointRoutes: boolean): Map<string, ApiRoute[]> {
  const out = new Map<string, ApiRoute[]>();
  for (const r of routes)
    if (r.doc && (r.kind === 'endpoint') === endpointRoutes) out.set(r.path, [...(out.get(r.path) ?? []), r]);
  return out;
}

/** The routes of one endpoint or model that the key may call, from the route table. */
function targetPaths(t: OpenApiTarget, readOnly: boolean, table: readonly ApiRoute[]): Paths {
  const tag = t.kind === 'model' ? `model ${t.id}` : `endpoint ${t.id}`;
  const suffix = `_${t.id.replace(/[^A-Za-z0-9_]/g, '_')}`;
  const paths: Paths = {};
  for (const [pattern, all] of byPath(table, true)) {
    const routes = all.filter(
      (r) =>
        r.kind === 'endpoint' &&
        !(r.model === 'only' && t.kind !== 'model') &&
        !(r.doc!.endpointsOnly && t.kind !== 'endpoint') &&
        !(readOnly && !r.read && !READ_ONLY_OPERATIONS.has(r.operation)),
    );
    if (!routes.length) continue;
    const { path, params } = openApiPath(pattern.replace(':ep', t.id));
    addPath(paths, path, routes, (r, _m, m) =>
      operation(r.doc!, { id: `${r.doc!.id}${suffix}${m}`, tag, target: t, pathParams: params }),
    );
  }
  return paths;
}

/** The routes that are not per endpoint. `security: []`: no key needed (routes that check their own). */
function globalPaths(table: readonly ApiRoute[]): Paths {
  const paths: Paths = {};
  for (const [pattern, routes] of byPath(table, false)) {
    const { path, params } = openApiPath(pattern);
    addPath(paths, path, routes, (r, _m, m) => {
      const o = operation(r.doc!, { id: `${r.doc!.id}${m}`, tag: 'berth', pathParams: params });
      return r.kind === 'own' ? { ...o, security: [] } : o;
    });
  }
  return paths;
}

/**
 * The OpenAPI 3.1 document of the queue API as one API key sees it: the endpoints and public models it may use,
 * each with the input schema announced for it (`input.<id>`, `{type: object}` when none), and only the routes its
 * scope allows. Shared shapes come from the protocol's zod schemas.
 */
export function openApiDocument(o: OpenApiOptions): Record<string, unknown> {
  const schemas: Record<string, JsonSchema> = {
    ...protocolSchemas(),
    Ping: { type: 'object', properties: { status: { const: 'ok' } } },
  };
  const paths: Paths = {};
  for (const t of o.targets) {
    schemas[inputName(t)] = t.inputSchema
      ? { ...withoutDialect(t.inputSchema), ...(t.description ? { description: t.description } : {}) }
      : { type: 'object', description: 'No input schema announced yet: any JSON object' };
    Object.assign(paths, targetPaths(t, o.readOnly, o.routes));
  }
  Object.assign(paths, globalPaths(o.routes));
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Berth queue API',
      version: SERVER_VERSION,
      description:
        'RunPod-compatible queue API of a Berth control plane (docs/api.md). Endpoints and routes are the ones this API key may use.',
    },
    security: [{ bearer: [] }],
    tags: [
      { name: 'berth' },
      ...o.targets.map((t) => ({
        name: `${t.kind} ${t.id}`,
        ...(t.description ? { description: t.description } : {}),
      })),
    ],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' } },
      schemas,
    },
  };
}
