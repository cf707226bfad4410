import { describeValue, ENDPOINT_ID_RE } from '@berth/protocol';
import { createLogger, type Logger } from '@berth/protocol/log';
import { berthTracer } from '@berth/protocol/tracing';
import type { Tracer } from '@opentelemetry/api';
import { systemClock, type Clock } from './clock.js';
import { MemoryStore } from './store/memory/memory-store.js';
import { SERVER_DEFAULTS as D, SERVER_LIMITS } from './defaults.js';
import { ConfigError } from './errors.js';
import type { RetentionPolicy, Store } from './store/types.js';
import { allowAll, type Guard } from './http/guard.js';
import { resolveModels } from './models/registry.js';
import type { ModelConfig, PublicModel } from './models/types.js';
import type { KeyStore } from './keys/key-store.js';
import type { ScalingPolicy } from './scaling/policy.js';
import { resolveLbEndpoint, type LbEndpointOptions, type ResolvedLbEndpoint } from './lb/options.js';
import type { ClusterBus } from './cluster/types.js';
import { resolveHttpTimeouts, type HttpTimeouts, type ResolvedHttpTimeouts } from './http/node-server.js';
import { resolveRateLimits, type RateLimitOptions, type ResolvedRateLimits } from './limits/rate-limit-options.js';
import { resolveWebhookOptions, type ResolvedWebhookOptions, type WebhookOptions } from './webhooks/webhook-options.js';

/** Options of `createServer`. Every field is optional; `resolveServerOptions` applies the defaults. */
export interface ServerOptions {
  /** API keys accepted on the HTTP API (Bearer or bare `Authorization`). CLI: `BERTH_API_KEY`. Default: none (every request is 401). */
  apiKeys?: string[];
  /** Tokens workers present when dialing the WebSocket. CLI: `BERTH_WORKER_TOKEN`. Default: none (no worker can connect). */
  workerTokens?: string[];
  /** Endpoint ids served. Default: `[]`. Others exist only through `acceptWorkerEndpoints` or a stored worker token. */
  endpoints?: string[];
  /**
   * A worker announcing an unknown endpoint registers it (any holder of a shared worker token can then create
   * endpoints). Default: `false`: only configured endpoints, and those a stored worker token was created for.
   * CLI: `berth serve --accept-worker-endpoints`.
   */
  acceptWorkerEndpoints?: boolean;
  /** Where jobs live. Default: a fresh `MemoryStore`. */
  store?: Store;
  /** Time source (tests inject a `ManualClock`). Default: the system clock. */
  clock?: Clock;
  /** Default: `createLogger({ level: 'info' })`, JSON lines on stderr (`berth` sets level and format from its flags). */
  logger?: Logger;
  /**
   * OpenTelemetry tracer of the job spans (request, `berth.job`, `berth.queue_wait`, `berth.run`; docs/observability.md).
   * Default: the one `startTracing()` from `@berth/protocol` set up (`berth serve` / `berth dev` call it when
   * `OTEL_EXPORTER_OTLP_ENDPOINT` is set), else none: tracing off, at no cost.
   */
  tracer?: Tracer;
  /**
   * Whether a request's W3C `traceparent` is trusted. `true`: the request span is its child (the caller's trace and
   * sampling decision). `false`: a new root span with a link to the caller's, so a caller outside your system can
   * neither force sampling nor join your spans to its trace. CLI: `BERTH_TRUST_TRACEPARENT=off`. Default: `true`.
   */
  trustTraceparent?: boolean;
  /** Retention after a terminal state, ms. Default: `{ async: 1_800_000, sync: 60_000 }`. */
  retention?: Partial<RetentionPolicy>;
  /** How often deadlines are swept, ms. `0` disables the timer (tests call `server.sweep()`). Default: 1000. */
  sweepIntervalMs?: number;
  /**
   * Batch Jobs limits (docs/api.md#batch-jobs): queued batch requests per endpoint (`maxQueued`, default 50,000, as
   * RunPod), open batches per endpoint (`maxOpen`, default 100), requests per add call (`maxPerCall`, default
   * 10,000; the body is at most 10 MiB like /run), how long an ended batch and its requests are kept (`retentionMs`,
   * default 7 days).
   */
  batches?: Partial<BatchOptions>;
  /** Heartbeat interval on the worker socket, ms; a worker silent for 3 intervals is dropped. Default: 5000. */
  heartbeatMs?: number;
  /** How long a disconnected worker keeps its running jobs before they are requeued, ms. Default: 10000. */
  workerGraceMs?: number;
  /** Attempts before a job whose workers keep getting lost is FAILED ("worker lost"). Default: 3. */
  maxAttempts?: number;
  /** How long RunPod-protocol workers' job-take and job-stop polls are held before 204, ms (100-80000). Default: 20000. */
  pullHoldMs?: number;
  /** Checks run before each operation after authentication (rate limits plug in here). Default: allow all. */
  guard?: Guard;
  /**
   * Endpoints' scaling policies (CLI: the config's minWorkers, maxWorkers, scaler, ...): served read-only at
   * `GET /v2/<endpoint_id>/scaling` for an external autoscaler (KEDA). Default: none (no such route).
   */
  scaling?: Record<string, ScalingPolicy>;
  /**
   * Load-balancing endpoints (`"type": "http"` in berth.config; docs/load-balancing.md): endpoint id to its proxy
   * settings (worker concurrency, request timeout, body limit, waits, health path). Each is served (added to
   * `endpoints`) at `/v2/<id>/lb/<path>`; its workers are registered through `server.lb`. Default: none.
   */
  lb?: Record<string, LbEndpointOptions>;
  /**
   * Host-based routing of load-balancing endpoints, as RunPod's `https://<ENDPOINT_ID>.api.runpod.ai/<path>`: a
   * request whose `Host` is `<ep>.<lbDomain>` is served as `/v2/<ep>/lb/<path>`. CLI: `BERTH_LB_DOMAIN`. Default:
   * none.
   */
  lbDomain?: string;
  /**
   * Public models served under `/v2/<model_slug>/...`: slug (lowercase words joined by hyphens) to its endpoint,
   * kind (`image`, `upscale`), description, price table and input limits (`docs/public-models.md`). CLI: the
   * `models` section of `berth.config.json`. Default: none.
   */
  models?: Record<string, ModelConfig>;
  /**
   * Folder for output files that workers without S3 upload (`docs/output-storage.md`). Default: a fresh temp
   * folder, deleted by `close()`.
   */
  filesDir?: string;
  /** Secret signing output file URLs (HMAC-SHA256). Default: a random one kept in `<filesDir>/.url-secret`. */
  filesSecret?: string;
  /** Largest output file a worker may upload, bytes (larger: 413). Default: 100 MB. */
  maxFileBytes?: number;
  /**
   * Secret the job-token signing key is derived from (docs/job-tokens.md); every replica must have the same.
   * CLI: `BERTH_JOB_TOKEN_SECRET`. Default: derived from the output-file URL secret (`filesSecret`, or the one
   * the store keeps: a row of PostgreSQL shared by every replica, `<filesDir>/.url-secret` otherwise).
   */
  jobTokenSecret?: string;
  /** Base of output file URLs, e.g. `https://berth.example.com`. Default: `http://<Host header of the upload>`. */
  publicUrl?: string;
  /**
   * Stored API keys (`berth keys create`), accepted alongside `apiKeys`, with their scopes. Default: none.
   * See `docs/api-keys.md`.
   */
  keyStore?: KeyStore;
  /**
   * Channel to the other control-plane replicas sharing `store` (docs/deployment.md, several replicas).
   * Default: the store's own channel (`Store.clusterBus`: LISTEN/NOTIFY for `PgStore`), none for the memory and
   * SQLite stores; `false`: none.
   */
  cluster?: ClusterBus | false;
  /**
   * Per key x endpoint x operation limits in fixed 10 s windows (`docs/rate-limits.md`). `{ enabled: false }`
   * turns them off (a boolean is refused with a `ConfigError` naming that form). CLI: `BERTH_RATE_LIMITS=off`.
   * Default: on, with the limits of docs/rate-limits.md and 50 per running worker.
   */
  rateLimits?: RateLimitOptions;
  /** Webhook delivery: signing secret, retries, allowed address kinds (`docs/webhooks.md`). Default: see `WebhookOptions`. */
  webhooks?: WebhookOptions;
  /** How long clients may take to send a request: headers 20 s, whole request 300 s, keep-alive 65 s (`HttpTimeouts`). */
  httpTimeouts?: HttpTimeouts;
  /**
   * Bytes of request bodies the process holds at once, all requests together (received, parsed, or waiting for
   * their answer); past it a request is refused with 503 `overloaded` and `Retry-After: 1`. CLI:
   * `BERTH_MAX_BODY_BYTES_IN_FLIGHT`. Default: 256 MB (ten 20 MB `/runsync` bodies at once, and room for smaller
   * requests).
   */
  maxBodyBytesInFlight?: number;
  /**
   * Bytes of blob files on disk (issue #35: inputs and outputs of big jobs, kept beside the SQLite database in
   * `blobs/`, or spooled through a temp folder for stores that keep values inline); past it a big submit or
   * upload is refused with 503 `overloaded` and `Retry-After: 1`. A full disk answers 507 `insufficient_storage`.
   * CLI: `BERTH_MAX_BLOB_BYTES`. Default: 16 GiB.
   */
  maxBlobBytes?: number;
  /**
   * Open TCP connections (API clients and workers together); past it new connections are closed at once. CLI:
   * `BERTH_MAX_CONNECTIONS`. Default: 10,000.
   */
  maxConnections?: number;
  /** Largest frame a worker may send, bytes; a larger one closes its connection (1009). Default: `LIMITS.workerFrameBytes` (24 MB). */
  maxWorkerFrameBytes?: number;
  /**
   * Messages per second read from one worker connection; past it reading pauses until the next second. The result
   * of a job the worker holds (one per assignment) is not counted. Default: 5,000.
   */
  workerMessagesPerSecond?: number;
}

/** Batch Jobs limits (`ServerOptions.batches`). */
export interface BatchOptions {
  maxQueued: number;
  maxOpen: number;
  maxPerCall: number;
  retentionMs: number;
}

export interface ResolvedServerOptions {
  batches: BatchOptions;
  apiKeys: string[];
  workerTokens: string[];
  endpoints: string[];
  lb: Record<string, ResolvedLbEndpoint>;
  lbDomain: string | undefined;
  acceptWorkerEndpoints: boolean;
  store: Store;
  clock: Clock;
  logger: Logger;
  tracer: Tracer | undefined;
  trustTraceparent: boolean;
  retention: RetentionPolicy;
  sweepIntervalMs: number;
  heartbeatMs: number;
  workerGraceMs: number;
  pullHoldMs: number;
  maxAttempts: number;
  guard: Guard;
  scaling: Record<string, ScalingPolicy> | undefined;
  models: Map<string, PublicModel>;
  filesDir: string | undefined;
  filesSecret: string | undefined;
  jobTokenSecret: string | undefined;
  maxFileBytes: number;
  publicUrl: string | undefined;
  keyStore: KeyStore | undefined;
  cluster: ClusterBus | undefined;
  rateLimits: ResolvedRateLimits;
  webhooks: ResolvedWebhookOptions;
  httpTimeouts: ResolvedHttpTimeouts;
  maxBodyBytesInFlight: number;
  maxBlobBytes: number;
  maxConnections: number;
  maxWorkerFrameBytes: number;
  workerMessagesPerSecond: number;
}

function nonNegative(name: string, v: number | undefined, def: number): number {
  if (v === undefined) return def;
  if (!Number.isFinite(v) || v < 0)
    throw new ConfigError(`option ${name} must be a non-negative number, got ${String(v)}`);
  return v;
}

/** Below the worker's 90 s client timeout, and long enough not to be a busy loop. */
function pullHold(v: number | undefined): number {
  const ms = nonNegative('pullHoldMs', v, D.pullHoldMs);
  const { min, max } = SERVER_LIMITS.pullHoldMs;
  if (ms < min || ms > max) throw new ConfigError(`option pullHoldMs must be between ${min} and ${max} ms, got ${ms}`);
  return ms;
}

/** A string `"false"` must not read as trusted: only a boolean is accepted. */
function trustTraceparent(v: unknown): boolean {
  if (v === undefined) return true;
  if (typeof v !== 'boolean')
    throw new ConfigError(`option trustTraceparent must be true or false (got ${describeValue(v)})`);
  return v;
}

/** Applies defaults (`SERVER_DEFAULTS`) and checks every option; a bad option throws a `ConfigError` naming it and its value. */
export function resolveServerOptions(o: ServerOptions = {}): ResolvedServerOptions {
  for (const id of [...(o.endpoints ?? []), ...Object.keys(o.lb ?? {})]) {
    if (!ENDPOINT_ID_RE.test(id))
      throw new ConfigError(`option endpoints: "${id}" is not a valid endpoint id (${ENDPOINT_ID_RE})`);
  }
  const heartbeatMs = nonNegative('heartbeatMs', o.heartbeatMs, D.heartbeatMs);
  if (heartbeatMs === 0) throw new ConfigError('option heartbeatMs must be positive');
  const maxAttempts = nonNegative('maxAttempts', o.maxAttempts, D.maxAttempts);
  if (maxAttempts < 1) throw new ConfigError('option maxAttempts must be at least 1');
  const models = resolveModels(o.models);
  for (const slug of models.keys()) {
    if (o.endpoints?.includes(slug))
      throw new ConfigError(
        `option models: "${slug}" is also an endpoint id; a model slug must differ from every endpoint id`,
      );
  }
  if (o.publicUrl !== undefined && !/^https?:\/\/[^/]/.test(o.publicUrl))
    throw new ConfigError(`option publicUrl must be an http(s) URL, got ${JSON.stringify(o.publicUrl)}`);
  if (o.filesSecret !== undefined && o.filesSecret.length < SERVER_LIMITS.filesSecretMinChars)
    throw new ConfigError(`option filesSecret must be at least ${SERVER_LIMITS.filesSecretMinChars} characters`);
  if (o.jobTokenSecret !== undefined && o.jobTokenSecret.length < SERVER_LIMITS.filesSecretMinChars)
    throw new ConfigError(`option jobTokenSecret must be at least ${SERVER_LIMITS.filesSecretMinChars} characters`);
  return {
    apiKeys: [...(o.apiKeys ?? [])],
    workerTokens: [...(o.workerTokens ?? [])],
    endpoints: [...new Set([...(o.endpoints ?? []), ...Object.keys(o.lb ?? {})])],
    lb: Object.fromEntries(Object.entries(o.lb ?? {}).map(([id, ep]) => [id, resolveLbEndpoint(id, ep)])),
    lbDomain: lbDomain(o.lbDomain),
    acceptWorkerEndpoints: o.acceptWorkerEndpoints ?? false,
    store: o.store ?? new MemoryStore(),
    clock: o.clock ?? systemClock,
    logger: o.logger ?? createLogger({ level: 'info' }),
    tracer: o.tracer ?? berthTracer(),
    trustTraceparent: trustTraceparent(o.trustTraceparent),
    retention: {
      async: nonNegative('retention.async', o.retention?.async, D.retention.async),
      sync: nonNegative('retention.sync', o.retention?.sync, D.retention.sync),
    },
    sweepIntervalMs: nonNegative('sweepIntervalMs', o.sweepIntervalMs, D.sweepIntervalMs),
    batches: {
      maxQueued: nonNegative('batches.maxQueued', o.batches?.maxQueued, 50_000),
      maxOpen: nonNegative('batches.maxOpen', o.batches?.maxOpen, 100),
      maxPerCall: nonNegative('batches.maxPerCall', o.batches?.maxPerCall, 10_000),
      retentionMs: nonNegative('batches.retentionMs', o.batches?.retentionMs, 7 * 24 * 3600_000),
    },
    heartbeatMs,
    workerGraceMs: nonNegative('workerGraceMs', o.workerGraceMs, D.workerGraceMs),
    pullHoldMs: pullHold(o.pullHoldMs),
    maxAttempts,
    guard: o.guard ?? allowAll,
    scaling: o.scaling,
    models,
    filesDir: o.filesDir,
    filesSecret: o.filesSecret,
    jobTokenSecret: o.jobTokenSecret,
    maxFileBytes: nonNegative('maxFileBytes', o.maxFileBytes, D.maxFileBytes),
    publicUrl: o.publicUrl,
    keyStore: o.keyStore,
    cluster: o.cluster === false ? undefined : (o.cluster ?? o.store?.clusterBus?.()),
    rateLimits: resolveRateLimits(o.rateLimits),
    webhooks: resolveWebhookOptions(o.webhooks),
    httpTimeouts: resolveHttpTimeouts(o.httpTimeouts),
    maxBodyBytesInFlight: nonNegative('maxBodyBytesInFlight', o.maxBodyBytesInFlight, D.maxBodyBytesInFlight),
    maxBlobBytes: nonNegative('maxBlobBytes', o.maxBlobBytes, D.maxBlobBytes),
    maxConnections: nonNegative('maxConnections', o.maxConnections, D.maxConnections),
    maxWorkerFrameBytes: nonNegative('maxWorkerFrameBytes', o.maxWorkerFrameBytes, D.maxWorkerFrameBytes),
    workerMessagesPerSecond: Math.max(
      1,
      nonNegative('workerMessagesPerSecond', o.workerMessagesPerSecond, D.workerMessagesPerSecond),
    ),
  };
}

/** A domain like `lb.example.com` (lowercase letters, digits, `-` and dots). */
function lbDomain(d: string | undefined): string | undefined {
  if (d === undefined || d === '') return undefined;
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(d))
    throw new ConfigError(`option lbDomain must be a domain like "lb.example.com" (got ${describeValue(d)})`);
  return d;
}
