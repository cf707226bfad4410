import { READ_ONLY_OPERATIONS } from '../../keys/scope-guard.js';
import type { IntQuery } from '../query.js';
import {
  GLOBAL_ROUTES,
  OPENAI_ROUTES,
  QUEUE_ROUTES,
  type GlobalRoute,
  type Method,
  type PlainQuery,
  type QueueRoute,
  type RouteDoc,
} from '../route-table.js';
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
}

type Operation = Record<string, unknown>;
type Paths = Record<string, Partial<Record<'get' | 'post', Operation>>>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const ERRORS = {
  '4XX': json(ref('Error'), 'An error with a stable code (docs/errors.md)'),
  '5XX': json(ref('Error'), 'Server error or shutting down'),
};
const jobIdParam = { name: 'job_id', in: 'path', required: true, schema: { type: 'string' } };
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
  doc: RouteDoc & { media?: string },
  opts: { id: string; tag: string; target?: OpenApiTarget; job?: boolean },
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
  const params = [...(opts.job ? [jobIdParam] : []), ...(doc.query ?? []).map(queryParam)];
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

/** `{get, post}` of one route: each method its own operation (ids `<id>` for POST, `<id>_get` beside it). */
function methods(list: readonly Method[], make: (suffix: string) => Operation): Paths[string] {
  const out: Paths[string] = {};
  for (const m of list) out[m === 'GET' ? 'get' : 'post'] = make(m === 'GET' && list.includes('POST') ? '_get' : '');
  return out;
}

/** The routes of one endpoint or model that the key may call, from the route table. */
function targetPaths(t: OpenApiTarget, readOnly: boolean): Paths {
  const base = `/v2/${t.id}`;
  const tag = t.kind === 'model' ? `model ${t.id}` : `endpoint ${t.id}`;
  const suffix = `_${t.id.replace(/[^A-Za-z0-9_]/g, '_')}`;
  const paths: Paths = {};
  for (const [name, route] of Object.entries(QUEUE_ROUTES) as [string, QueueRoute][]) {
    if (route.only === 'model' && t.kind !== 'model') continue;
    if (readOnly && !READ_ONLY_OPERATIONS.has(route.operation)) continue;
    paths[`${base}/${name}${route.job ? '/{job_id}' : ''}`] = methods(route.methods, (m) =>
      operation(route.doc, { id: `${route.doc.id}${suffix}${m}`, tag, target: t, job: route.job }),
    );
  }
  if (t.kind === 'endpoint' && !(readOnly && !READ_ONLY_OPERATIONS.has('openai')))
    for (const [name, route] of Object.entries(OPENAI_ROUTES))
      paths[`${base}/openai/${name}`] = methods(route.methods, (m) =>
        operation(route.doc, { id: `${route.doc.id}${suffix}${m}`, tag }),
      );
  return paths;
}

/** The routes that are not per endpoint. `security: []`: no key needed. */
function globalPaths(): Paths {
  const paths: Paths = {};
  for (const [path, route] of Object.entries(GLOBAL_ROUTES) as [string, GlobalRoute][]) {
    const params = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    paths[path] = methods(route.methods, (m) => {
      const o = operation(route.doc, { id: `${route.doc.id}${m}`, tag: 'berth' });
      if (params.length) o['parameters'] = [...params, ...((o['parameters'] as unknown[]) ?? [])];
      return route.open ? { ...o, security: [] } : o;
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
    Object.assign(paths, targetPaths(t, o.readOnly));
  }
  Object.assign(paths, globalPaths());
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
