import { QUERY } from './query.js';
import { routeNotFound } from './answer-error.js';
import type { ApiRoute, EndpointRoute, GlobalRoute, OwnRoute } from './route-types.js';
import { run, runsync } from './routes/submit.js';
import { cancel, health, purgeQueue, retry, status, statusSync } from './routes/jobs.js';
import { stream } from './routes/stream.js';
import { webhookLog } from './routes/webhook-log.js';
import { jobLogs, recentJobs } from './routes/observe.js';
import { listRequests } from './routes/requests.js';
import { BATCH_ROUTES } from './routes/batch-routes.js';
import { scaling } from './routes/scaling.js';
import { monitorRoute } from './routes/monitor.js';
import { catalog, estimate } from './routes/catalog.js';
import { chatCompletions, completions, openAiModels } from './openai/index.js';
import { openApi } from './openapi/route.js';
import { issueToken } from '../tokens/token-route.js';
import { serveLb } from '../lb/lb-route.js';
import { WORKER_ROUTES } from './worker-routes.js';

/**
 * The one table of the HTTP API's routes. Each entry carries its path, methods, handler, who may call it, what
 * the guard counts it as, whether it is answered while draining, and its part of the OpenAPI document
 * (`openapi/document.ts` generates the document from this table). `api.ts` loads it into the one matcher
 * (`router.ts`) and runs every request through the steps of `steps.ts`, in their order.
 *
 * Adding a route is one entry below:
 * - a route of an endpoint (`/v2/:ep/...`): `endpoint({ path, methods, auth, operation, doc, serve })`; its
 *   handler gets a `RouteCall` (endpoint, principal, `params` of the path, the model if a slug named it) after the
 *   key, endpoint, job token, method and guard checks. Path parameters are `:name` (`rc.params.name`); `*name`
 *   takes the rest of the path. Several entries may share a path with different methods.
 * - a route outside an endpoint that needs an API key: `{ kind: 'global', ... }` (method, then key).
 * - a route that checks its own credential and method (signed URLs; the routes workers call are the section
 *   `WORKER_ROUTES` of `worker-routes.ts`): `{ kind: 'own', ... }`.
 * Then add its row to docs/api.md (and docs/rate-limits.md under its operation); the tests check both.
 */

const GET_POST = ['GET', 'POST'] as const;
const GET_HEAD = ['GET', 'HEAD'] as const;
/** What a load-balancing worker may be asked (its own routes decide). */
const LB_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'PATCH', 'OPTIONS'] as const;

/** An endpoint route; `job` adds the `:job_id` segment (`rc.jobId`). */
function endpoint(
  name: string,
  r: Omit<EndpointRoute, 'kind' | 'path' | 'auth'> & { job?: boolean; auth?: 'job-token' },
) {
  const { job, ...route } = r;
  return { kind: 'endpoint', auth: 'key', path: `/v2/:ep/${name}${job ? '/:job_id' : ''}`, ...route } as const;
}

export const ROUTES: readonly ApiRoute[] = [
  endpoint('run', {
    methods: ['POST'],
    operation: 'run',
    serve: run,
    doc: { id: 'run', summary: 'Queue a job', body: 'job', reply: 'RunReply' },
  }),
  endpoint('runsync', {
    methods: ['POST'],
    operation: 'runsync',
    serve: runsync,
    doc: {
      id: 'runsync',
      summary: 'Run a job and wait for it',
      query: [QUERY.runsyncWait],
      body: 'job',
      reply: 'JobObject',
    },
  }),
  endpoint('status', {
    methods: GET_POST,
    operation: 'status',
    job: true,
    auth: 'job-token',
    serve: status,
    doc: { id: 'status', summary: 'The job object', query: [QUERY.ttl], reply: 'JobObject' },
  }),
  endpoint('status-sync', {
    methods: GET_POST,
    operation: 'status',
    job: true,
    auth: 'job-token',
    serve: statusSync,
    doc: {
      id: 'statusSync',
      summary: 'The job object, long-polling until terminal',
      query: [QUERY.statusWait, QUERY.ttl],
      reply: 'JobObject',
    },
  }),
  endpoint('stream', {
    methods: GET_POST,
    operation: 'stream',
    job: true,
    auth: 'job-token',
    serve: stream,
    doc: {
      id: 'stream',
      summary: 'Chunks not yet delivered (or server-sent events)',
      query: [QUERY.streamWait],
      reply: 'StreamReply',
      sse: true,
    },
  }),
  endpoint('cancel', {
    methods: ['POST'],
    operation: 'cancel',
    job: true,
    // A job token may cancel only when issued with `cancel: true` (`tokens/job-tokens.ts`).
    auth: 'job-token',
    serve: cancel,
    doc: { id: 'cancel', summary: 'Cancel a queued or running job', reply: 'JobObject' },
  }),
  endpoint('retry', {
    methods: ['POST'],
    operation: 'retry',
    job: true,
    serve: retry,
    doc: { id: 'retry', summary: 'Requeue a FAILED or TIMED_OUT job', reply: 'RunReply' },
  }),
  endpoint('purge-queue', {
    methods: ['POST'],
    operation: 'purge-queue',
    serve: purgeQueue,
    doc: { id: 'purgeQueue', summary: 'Remove the queued jobs', reply: 'PurgeReply' },
  }),
  endpoint('health', {
    methods: ['GET'],
    operation: 'health',
    // A load-balancing endpoint's: its requests waiting and in flight, its workers ready or initializing.
    serve: (rc, d) =>
      d.lb?.has(rc.endpointId) ? Promise.resolve({ status: 200, json: d.lb.health(rc.endpointId) }) : health(rc),
    doc: { id: 'health', summary: 'Job counts and workers', reply: 'HealthReply' },
  }),
  endpoint('webhooks', {
    methods: ['GET'],
    operation: 'status',
    job: true,
    serve: (rc, d) => webhookLog(rc, d.store),
    doc: { id: 'webhooks', summary: 'Webhook deliveries of a job', reply: 'object' },
  }),
  endpoint('logs', {
    methods: ['GET'],
    operation: 'status',
    job: true,
    auth: 'job-token',
    serve: (rc, d) => jobLogs(rc, d.store),
    doc: { id: 'logs', summary: 'What the handler logged for a job', reply: 'object' },
  }),
  endpoint('jobs', {
    methods: ['GET'],
    operation: 'status',
    serve: (rc, d) => recentJobs(rc, d.store),
    doc: { id: 'jobs', summary: 'Recent jobs, newest first', query: [QUERY.jobsLimit], reply: 'object' },
  }),
  endpoint('requests', {
    methods: ['GET'],
    operation: 'requests',
    serve: (rc, d) => listRequests(rc, d.store),
    doc: {
      id: 'requests',
      summary: "The endpoint's requests, newest first, a page at a time (RunPod's /requests: 10 per 10 s)",
      query: [
        QUERY.jobsLimit,
        { name: 'status', type: 'string', description: 'Only these states, comma-separated (IN_QUEUE,COMPLETED,...)' },
        { name: 'cursor', type: 'string', description: 'The nextCursor of the previous page' },
      ],
      reply: 'object',
    },
  }),
  endpoint('token', {
    methods: ['POST'],
    operation: 'status',
    job: true,
    serve: issueToken,
    doc: {
      id: 'token',
      summary: 'A new job token for this job (docs/job-tokens.md): read-only, and may cancel with cancel=true',
      query: [
        { name: 'ttlSeconds', type: 'integer', description: 'Seconds the token lives, 10..86400, default 900' },
        { name: 'cancel', type: 'string', description: 'true: the token may also cancel the job' },
      ],
      reply: 'object',
    },
  }),
  endpoint('scaling', {
    methods: ['GET'],
    operation: 'health',
    serve: (rc, d) => {
      if (!d.scaling) return Promise.reject(routeNotFound(rc.req));
      if (!d.lb?.has(rc.endpointId)) return scaling(rc, d.scaling);
      const health = d.lb.health(rc.endpointId);
      return scaling(rc, d.scaling, { health, waitedMs: d.lb.counts(rc.endpointId).waitedMs });
    },
    doc: {
      id: 'scaling',
      summary: "Desired workers from the endpoint's scaling policy (KEDA metrics-api; docs/deployment.md)",
      reply: 'object',
    },
  }),
  endpoint('monitor', {
    methods: ['GET'],
    operation: 'health',
    serve: (rc, d) => (d.monitor ? monitorRoute(rc, d.monitor) : Promise.reject(routeNotFound(rc.req))),
    doc: {
      id: 'monitor',
      summary: 'The last 15 minutes (or up to an hour) in 5 s slots: jobs, queue, workers, delay and execution',
      query: [QUERY.monitorWindow],
      reply: 'object',
    },
  }),
  endpoint('estimate', {
    methods: ['POST'],
    operation: 'status',
    model: 'only',
    serve: (rc) => estimate(rc.model!, rc.req),
    doc: { id: 'estimate', summary: 'The cost a submit would be charged', body: 'job', reply: 'estimate' },
  }),
  // The OpenAI-compatible routes (docs/openai.md): errors in the OpenAI shape, not through a model's pricing.
  ...(
    [
      ['v1/chat/completions', 'POST', chatCompletions, 'openaiChat', 'OpenAI-compatible chat completions'],
      ['v1/completions', 'POST', completions, 'openaiCompletions', 'OpenAI-compatible completions'],
      ['v1/models', 'GET', openAiModels, 'openaiModels', 'OpenAI-compatible model list'],
    ] as const
  ).map(([name, method, serve, id, summary]) =>
    endpoint(`openai/${name}`, {
      methods: [method],
      operation: 'openai',
      model: 'direct',
      errors: 'openai',
      serve,
      doc:
        method === 'POST'
          ? { id, summary, body: 'object', reply: 'object', sse: true, endpointsOnly: true }
          : { id, summary, reply: 'object', endpointsOnly: true },
    }),
  ),
  // Load-balancing endpoints (docs/load-balancing.md): every method, any path below /lb, to a ready worker.
  ...['lb', 'lb/*path'].map((name) =>
    endpoint(name, {
      methods: LB_METHODS,
      operation: 'lb',
      model: 'direct',
      rawBody: true,
      when: (d) => d.lb !== undefined,
      serve: (rc, d) => serveLb(rc, d.lb),
    }),
  ),
  // Batch Jobs (`/v2/<ep>/batch...`, routes/batch-routes.ts).
  ...BATCH_ROUTES,
  // Fallbacks: any other `/v2/<ep>/<op>[/<id>]` is 404 once the key and endpoint are checked.
  endpoint('openai/*rest', {
    methods: [],
    operation: 'openai',
    errors: 'openai',
    notFound: '; the OpenAI routes are v1/chat/completions, v1/completions and v1/models',
  }),
  endpoint(':op', { methods: [], operation: 'status' }),
  endpoint(':op/:job_id', { methods: [], operation: 'status' }),
  ...globalRoutes(),
  ...ownRoutes(),
];

function globalRoutes(): GlobalRoute[] {
  return [
    {
      kind: 'global',
      auth: 'key',
      path: '/v2/_berth/catalog',
      methods: ['GET'],
      name: 'the catalog',
      when: (d) => d.catalog !== undefined,
      serve: (who, d) => catalog(who, d.catalog!),
      doc: {
        id: 'catalog',
        summary: 'Endpoints (type queue or http) and public models this key may use',
        reply: 'object',
      },
    },
    {
      kind: 'global',
      auth: 'key',
      path: '/openapi.json',
      methods: ['GET'],
      name: '/openapi.json',
      when: (d) => d.catalog !== undefined,
      serve: (who, d) => openApi(who, d.catalog!, ROUTES),
      doc: { id: 'openapi', summary: 'This document, for this key', reply: 'object' },
    },
    {
      kind: 'global',
      auth: 'key',
      path: '/metrics',
      methods: ['GET'],
      name: '/metrics',
      when: (d) => d.metrics !== undefined,
      // A key limited to some endpoints sees only their lines.
      serve: async (who, d) => ({
        status: 200,
        headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
        bytes: Buffer.from(await d.metrics!.render(who.scope?.endpoints ?? null)),
      }),
      doc: { id: 'metrics', summary: 'Prometheus metrics', reply: 'Prometheus text format', media: 'text/plain' },
    },
  ];
}

function ownRoutes(): OwnRoute[] {
  const page = (path: string, doc?: OwnRoute['doc']): OwnRoute => ({
    kind: 'own',
    auth: 'none',
    path,
    methods: GET_HEAD,
    when: (d) => d.playground !== undefined,
    // Another method is no route at all (404), as for any path the API does not know.
    serve: async (req, _p, d) =>
      (req.method === 'GET' || req.method === 'HEAD' ? d.playground!(req) : undefined) ??
      Promise.reject(routeNotFound(req)),
    ...(doc ? { doc } : {}),
  });
  return [
    {
      kind: 'own',
      auth: 'none',
      path: '/ping',
      methods: ['GET'],
      whileDraining: true,
      // Any method: load balancers' liveness checks vary.
      serve: async () => ({ status: 200, json: { status: 'ok' } }),
      doc: { id: 'ping', summary: 'Liveness', reply: 'Ping' },
    },
    page('/', { id: 'playground', summary: 'The playground page', reply: 'HTML', media: 'text/html' }),
    page('/docs', { id: 'apiReference', summary: 'This API reference as a page', reply: 'HTML', media: 'text/html' }),
    page('/playground/*file'),
    {
      kind: 'own',
      auth: 'none',
      path: '/files/*name',
      methods: GET_HEAD,
      // Jobs finishing during a graceful shutdown still upload and serve their outputs.
      whileDraining: true,
      when: (d) => d.files !== undefined,
      serve: (req, p, d) => d.files!.download(req, p['name']!),
      doc: {
        id: 'file',
        summary: 'An output file stored by the control plane (the signature is the credential)',
        query: [
          { name: 'expires', type: 'integer', description: 'Expiry, ms since the epoch' },
          { name: 'sig', type: 'string', description: 'Signature' },
        ],
        reply: 'The file',
        media: 'application/octet-stream',
      },
    },
    ...WORKER_ROUTES,
  ];
}
