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
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const ERRORS = {
  '4XX': json(ref('Error'), 'An error with a stable code (docs/errors.md)'),
  '5XX': json(ref('Error'), 'Server error or shutting down'),
};
const jobId = { name: 'job_id', in: 'path', required: true, schema: { type: 'string' } };
const query = (name: string, description: string, schema: JsonSchema = { type: 'integer' }) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});
const WAIT = (d: string) => query('wait', d);
const anyObject = { type: 'object' };

/** Schema component names allow letters, digits, `.`, `-` and `_` (endpoint ids and slugs fit). */
const inputName = (t: OpenApiTarget) => `input.${t.id}`;

function op(o: {
  id: string;
  summary: string;
  tag: string;
  params?: unknown[];
  body?: unknown;
  ok: unknown;
  sse?: boolean;
}): Operation {
  const ok = json(o.ok) as { description: string; content: Record<string, unknown> };
  if (o.sse)
    ok.content['text/event-stream'] = {
      schema: { type: 'string', description: 'server-sent events: data: {"output": chunk} ... event: done' },
    };
  return {
    operationId: o.id,
    summary: o.summary,
    tags: [o.tag],
    ...(o.params?.length ? { parameters: o.params } : {}),
    ...(o.body ? { requestBody: { required: true, content: { 'application/json': { schema: o.body } } } } : {}),
    responses: { '200': ok, ...ERRORS },
  };
}

/** The job routes of one endpoint or model, `{path: {method: operation}}`. */
function jobPaths(t: OpenApiTarget, readOnly: boolean): Record<string, Record<string, Operation>> {
  const base = `/v2/${t.id}`;
  const tag = t.kind === 'model' ? `model ${t.id}` : `endpoint ${t.id}`;
  const id = (name: string) => `${name}_${t.id.replace(/[^A-Za-z0-9_]/g, '_')}`;
  const request = { allOf: [ref('JobRequest'), { type: 'object', properties: { input: ref(inputName(t)) } }] };
  const both = (o: Operation) => ({ get: { ...o, operationId: `${o['operationId']}_get` }, post: o });
  const paths: Record<string, Record<string, Operation>> = {
    [`${base}/status/{job_id}`]: both(
      op({
        id: id('status'),
        tag,
        summary: 'The job object',
        params: [jobId, query('ttl', 'Sets the remaining lifespan, ms from now')],
        ok: ref('JobObject'),
      }),
    ),
    [`${base}/status-sync/{job_id}`]: both(
      op({
        id: id('statusSync'),
        tag,
        summary: 'The job object, long-polling until terminal',
        params: [jobId, WAIT('Long-poll up to this many ms')],
        ok: ref('JobObject'),
      }),
    ),
    [`${base}/stream/{job_id}`]: both(
      op({
        id: id('stream'),
        tag,
        summary: 'Chunks not yet delivered (or server-sent events)',
        params: [jobId, WAIT('Long-poll up to this many ms (default 10000)')],
        ok: ref('StreamReply'),
        sse: true,
      }),
    ),
    [`${base}/health`]: {
      get: op({ id: id('health'), tag, summary: 'Job counts and workers', ok: ref('HealthReply') }),
    },
    [`${base}/webhooks/{job_id}`]: {
      get: op({ id: id('webhooks'), tag, summary: 'Webhook deliveries of a job', params: [jobId], ok: anyObject }),
    },
    [`${base}/logs/{job_id}`]: {
      get: op({ id: id('logs'), tag, summary: 'What the handler logged for a job', params: [jobId], ok: anyObject }),
    },
    [`${base}/token/{job_id}`]: {
      post: op({
        id: id('token'),
        tag,
        summary: 'A new job token for the job (docs/job-tokens.md)',
        params: [
          jobId,
          query('ttlSeconds', 'Lifetime, 10..86400 s, default 900'),
          query('cancel', 'true: the token may also cancel the job', { type: 'boolean' }),
        ],
        ok: { type: 'object', properties: { id: { type: 'string' }, token: { type: 'string' } } },
      }),
    },
    [`${base}/jobs`]: {
      get: op({
        id: id('jobs'),
        tag,
        summary: 'Recent jobs, newest first',
        params: [query('limit', '1..500, default 50')],
        ok: anyObject,
      }),
    },
  };
  if (t.kind === 'model') {
    paths[`${base}/estimate`] = {
      post: op({
        id: id('estimate'),
        tag,
        summary: 'The cost a submit would be charged',
        body: request,
        ok: { type: 'object', properties: { cost: { type: 'number' }, input: ref(inputName(t)) } },
      }),
    };
  }
  if (readOnly) return paths;
  paths[`${base}/run`] = {
    post: op({ id: id('run'), tag, summary: 'Queue a job', body: request, ok: ref('RunReply') }),
  };
  paths[`${base}/runsync`] = {
    post: op({
      id: id('runsync'),
      tag,
      summary: 'Run a job and wait for it',
      params: [WAIT('Wait up to this many ms (1000..300000, default 90000)')],
      body: request,
      ok: ref('JobObject'),
    }),
  };
  paths[`${base}/cancel/{job_id}`] = {
    post: op({
      id: id('cancel'),
      tag,
      summary: 'Cancel a queued or running job',
      params: [jobId],
      ok: ref('JobObject'),
    }),
  };
  paths[`${base}/retry/{job_id}`] = {
    post: op({
      id: id('retry'),
      tag,
      summary: 'Requeue a FAILED or TIMED_OUT job',
      params: [jobId],
      ok: ref('RunReply'),
    }),
  };
  paths[`${base}/purge-queue`] = {
    post: op({ id: id('purgeQueue'), tag, summary: 'Remove the queued jobs', ok: ref('PurgeReply') }),
  };
  if (t.kind === 'endpoint') {
    const openai = (name: string, summary: string) =>
      op({ id: id(name), tag, summary, body: anyObject, ok: anyObject, sse: true });
    paths[`${base}/openai/v1/chat/completions`] = { post: openai('openaiChat', 'OpenAI-compatible chat completions') };
    paths[`${base}/openai/v1/completions`] = { post: openai('openaiCompletions', 'OpenAI-compatible completions') };
    paths[`${base}/openai/v1/models`] = {
      get: op({ id: id('openaiModels'), tag, summary: 'OpenAI-compatible model list', ok: anyObject }),
    };
  }
  return paths;
}

/** The routes that are not per endpoint. `security: []`: no key needed. */
function globalPaths(): Record<string, Record<string, Operation>> {
  const open = (o: Operation) => ({ ...o, security: [] });
  const text = (type: string, description: string) => ({
    '200': { description, content: { [type]: { schema: { type: 'string' } } } },
    ...ERRORS,
  });
  return {
    '/v2/_berth/catalog': {
      get: op({ id: 'catalog', tag: 'berth', summary: 'Endpoints and public models this key may use', ok: anyObject }),
    },
    '/openapi.json': {
      get: op({ id: 'openapi', tag: 'berth', summary: 'This document, for this key', ok: anyObject }),
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        tags: ['berth'],
        summary: 'Prometheus metrics',
        responses: text('text/plain', 'Prometheus text format'),
      },
    },
    '/ping': {
      get: open(
        op({
          id: 'ping',
          tag: 'berth',
          summary: 'Liveness',
          ok: { type: 'object', properties: { status: { const: 'ok' } } },
        }),
      ),
    },
    '/': {
      get: open({
        operationId: 'playground',
        tags: ['berth'],
        summary: 'The playground page',
        responses: text('text/html', 'HTML'),
      }),
    },
    '/docs': {
      get: open({
        operationId: 'apiReference',
        tags: ['berth'],
        summary: 'This API reference as a page',
        responses: text('text/html', 'HTML'),
      }),
    },
    '/files/{name}': {
      get: open({
        operationId: 'file',
        tags: ['berth'],
        summary: 'An output file stored by the control plane (the signature is the credential)',
        parameters: [
          { name: 'name', in: 'path', required: true, schema: { type: 'string' } },
          query('expires', 'Expiry, ms since the epoch'),
          query('sig', 'Signature', { type: 'string' }),
        ],
        responses: {
          '200': {
            description: 'The file',
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          },
          ...ERRORS,
        },
      }),
    },
  };
}

/**
 * The OpenAPI 3.1 document of the queue API as one API key sees it: the endpoints and public models it may use,
 * each with the input schema announced for it (`input.<id>`, `{type: object}` when none), and only the routes its
 * scope allows. Shared shapes come from the protocol's zod schemas.
 */
export function openApiDocument(o: OpenApiOptions): Record<string, unknown> {
  const schemas: Record<string, JsonSchema> = protocolSchemas();
  const paths: Record<string, Record<string, Operation>> = {};
  for (const t of o.targets) {
    schemas[inputName(t)] = t.inputSchema
      ? { ...withoutDialect(t.inputSchema), ...(t.description ? { description: t.description } : {}) }
      : { type: 'object', description: 'No input schema announced yet: any JSON object' };
    Object.assign(paths, jobPaths(t, o.readOnly));
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
