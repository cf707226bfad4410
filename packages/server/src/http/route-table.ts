import { BerthError } from '@berth/protocol';
import type { Operation } from './guard.js';
import { QUERY, type IntQuery } from './query.js';

/**
 * The one table of the HTTP API's routes: `api.ts` dispatches with it (methods, 405 with `Allow`, the guard's
 * operation, whether a job id follows), the OpenAPI document is generated from it (`openapi/document.ts`), and
 * the tests check docs/api.md and docs/rate-limits.md against it.
 */

export type Method = 'GET' | 'POST';

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
}

/** A route of one endpoint or public model: `/v2/<ep>/<name>[/<job_id>]`. */
export interface QueueRoute {
  methods: readonly Method[];
  /** What rate limits and key scopes count it as (`guard.ts`). */
  operation: Operation;
  /** Takes a `<job_id>` segment. */
  job: boolean;
  /** `model`: served on public model slugs only. */
  only?: 'model';
  doc: RouteDoc;
}

const GET_POST = ['GET', 'POST'] as const;

/** The routes of `/v2/<ep>/...`, by their path segment. */
export const QUEUE_ROUTES = {
  run: {
    methods: ['POST'],
    operation: 'run',
    job: false,
    doc: { id: 'run', summary: 'Queue a job', body: 'job', reply: 'RunReply' },
  },
  runsync: {
    methods: ['POST'],
    operation: 'runsync',
    job: false,
    doc: {
      id: 'runsync',
      summary: 'Run a job and wait for it',
      query: [QUERY.runsyncWait],
      body: 'job',
      reply: 'JobObject',
    },
  },
  status: {
    methods: GET_POST,
    operation: 'status',
    job: true,
    doc: { id: 'status', summary: 'The job object', query: [QUERY.ttl], reply: 'JobObject' },
  },
  'status-sync': {
    methods: GET_POST,
    operation: 'status',
    job: true,
    doc: {
      id: 'statusSync',
      summary: 'The job object, long-polling until terminal',
      query: [QUERY.statusWait, QUERY.ttl],
      reply: 'JobObject',
    },
  },
  stream: {
    methods: GET_POST,
    operation: 'stream',
    job: true,
    doc: {
      id: 'stream',
      summary: 'Chunks not yet delivered (or server-sent events)',
      query: [QUERY.streamWait],
      reply: 'StreamReply',
      sse: true,
    },
  },
  cancel: {
    methods: ['POST'],
    operation: 'cancel',
    job: true,
    doc: { id: 'cancel', summary: 'Cancel a queued or running job', reply: 'JobObject' },
  },
  retry: {
    methods: ['POST'],
    operation: 'retry',
    job: true,
    doc: { id: 'retry', summary: 'Requeue a FAILED or TIMED_OUT job', reply: 'RunReply' },
  },
  'purge-queue': {
    methods: ['POST'],
    operation: 'purge-queue',
    job: false,
    doc: { id: 'purgeQueue', summary: 'Remove the queued jobs', reply: 'PurgeReply' },
  },
  health: {
    methods: ['GET'],
    operation: 'health',
    job: false,
    doc: { id: 'health', summary: 'Job counts and workers', reply: 'HealthReply' },
  },
  webhooks: {
    methods: ['GET'],
    operation: 'status',
    job: true,
    doc: { id: 'webhooks', summary: 'Webhook deliveries of a job', reply: 'object' },
  },
  logs: {
    methods: ['GET'],
    operation: 'status',
    job: true,
    doc: { id: 'logs', summary: 'What the handler logged for a job', reply: 'object' },
  },
  jobs: {
    methods: ['GET'],
    operation: 'status',
    job: false,
    doc: { id: 'jobs', summary: 'Recent jobs, newest first', query: [QUERY.jobsLimit], reply: 'object' },
  },
  requests: {
    methods: ['GET'],
    operation: 'requests',
    job: false,
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
  },
  token: {
    methods: ['POST'],
    operation: 'status',
    job: true,
    doc: {
      id: 'token',
      summary: 'A new job token for this job (docs/job-tokens.md): read-only, and may cancel with cancel=true',
      query: [
        { name: 'ttlSeconds', type: 'integer', description: 'Seconds the token lives, 10..86400, default 900' },
        { name: 'cancel', type: 'string', description: 'true: the token may also cancel the job' },
      ],
      reply: 'object',
    },
  },
  scaling: {
    methods: ['GET'],
    operation: 'health',
    job: false,
    doc: {
      id: 'scaling',
      summary: "Desired workers from the endpoint's scaling policy (KEDA metrics-api; docs/deployment.md)",
      reply: 'object',
    },
  },
  monitor: {
    methods: ['GET'],
    operation: 'health',
    job: false,
    doc: {
      id: 'monitor',
      summary: 'The last 15 minutes (or up to an hour) in 5 s slots: jobs, queue, workers, delay and execution',
      query: [QUERY.monitorWindow],
      reply: 'object',
    },
  },
  estimate: {
    methods: ['POST'],
    operation: 'status',
    job: false,
    only: 'model',
    doc: { id: 'estimate', summary: 'The cost a submit would be charged', body: 'job', reply: 'estimate' },
  },
} as const satisfies Record<string, QueueRoute>;

export type QueueRouteName = keyof typeof QUEUE_ROUTES;

/** The OpenAI-compatible routes of an endpoint: `/v2/<ep>/openai/<name>` (docs/openai.md). */
export const OPENAI_ROUTES = {
  'v1/chat/completions': {
    methods: ['POST'],
    doc: {
      id: 'openaiChat',
      summary: 'OpenAI-compatible chat completions',
      body: 'object',
      reply: 'object',
      sse: true,
    },
  },
  'v1/completions': {
    methods: ['POST'],
    doc: {
      id: 'openaiCompletions',
      summary: 'OpenAI-compatible completions',
      body: 'object',
      reply: 'object',
      sse: true,
    },
  },
  'v1/models': {
    methods: ['GET'],
    doc: { id: 'openaiModels', summary: 'OpenAI-compatible model list', reply: 'object' },
  },
} as const satisfies Record<string, { methods: readonly Method[]; doc: RouteDoc }>;

export type OpenAiRouteKey = keyof typeof OPENAI_ROUTES;

/** A route outside `/v2/<ep>/`. */
export interface GlobalRoute {
  methods: readonly Method[];
  /** How a 405 names it. */
  name: string;
  /** No API key needed. */
  open?: boolean;
  doc: RouteDoc & {
    /** The reply's media type when not JSON. */
    media?: 'text/plain' | 'text/html' | 'application/octet-stream';
  };
}

/** The routes that are not per endpoint, by path. */
export const GLOBAL_ROUTES = {
  '/v2/_berth/catalog': {
    methods: ['GET'],
    name: 'the catalog',
    doc: { id: 'catalog', summary: 'Endpoints and public models this key may use', reply: 'object' },
  },
  '/openapi.json': {
    methods: ['GET'],
    name: '/openapi.json',
    doc: { id: 'openapi', summary: 'This document, for this key', reply: 'object' },
  },
  '/metrics': {
    methods: ['GET'],
    name: '/metrics',
    doc: { id: 'metrics', summary: 'Prometheus metrics', reply: 'Prometheus text format', media: 'text/plain' },
  },
  '/ping': { methods: ['GET'], name: '/ping', open: true, doc: { id: 'ping', summary: 'Liveness', reply: 'Ping' } },
  '/': {
    methods: ['GET'],
    name: 'the playground',
    open: true,
    doc: { id: 'playground', summary: 'The playground page', reply: 'HTML', media: 'text/html' },
  },
  '/docs': {
    methods: ['GET'],
    name: 'the API reference',
    open: true,
    doc: { id: 'apiReference', summary: 'This API reference as a page', reply: 'HTML', media: 'text/html' },
  },
  '/files/{name}': {
    methods: ['GET'],
    name: 'files',
    open: true,
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
} as const satisfies Record<string, GlobalRoute>;

/**
 * Throws 405 `method_not_allowed` (its details the allowed methods, sent as `Allow`) unless `route` answers
 * `method`; `name` is how the message names the route.
 */
export function checkMethod(method: string, route: { methods: readonly Method[] }, name: string): void {
  if (!(route.methods as readonly string[]).includes(method))
    throw new BerthError(
      'method_not_allowed',
      `${method} is not allowed on ${name}; use ${route.methods.join(' or ')}`,
      route.methods,
    );
}

/** The entry of `table` named `key`, if any (never an inherited property such as `constructor`). */
export function lookup<T extends object>(table: T, key: string): T[keyof T] | undefined {
  return Object.hasOwn(table, key) ? table[key as keyof T] : undefined;
}
