import type { Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { ENDPOINT_ID_RE, WORKER_WS_PATH, type HealthReply } from '@berth/protocol';
import { createApi } from './http/api.js';
import { KeyChecker } from './http/auth.js';
import { combineGuards, countRejections } from './http/guard.js';
import { ApiKeyAuth } from './keys/api-key-auth.js';
import { scopeGuard } from './keys/scope-guard.js';
import { createRateLimitGuard } from './limits/rate-limit-guard.js';
import { WebhookSender } from './webhooks/webhook-sender.js';
import { EventWebhooks } from './webhooks/event-webhooks.js';
import { nodeHandler } from './http/node-adapter.js';
import { createNodeServer } from './http/node-server.js';
import { serveWithoutUpgrade } from './http/plain-upgrade.js';
import { BodyBudget } from './http/body-budget.js';
import type { ApiRequest, ApiResponse } from './http/types.js';
import type { CoreContext } from './jobs/context.js';
import { JobTracer } from './jobs/job-tracer.js';
import { DeadlineAlarm } from './jobs/deadline-alarm.js';
import { Dispatcher } from './jobs/dispatcher.js';
import { WorkerReports } from './jobs/worker-reports.js';
import { sweepDeadlines, type SweepReport } from './jobs/deadline-sweep.js';
import { wireCluster } from './jobs/wire-cluster.js';
import { JobEvents } from './jobs/job-events.js';
import { JobService } from './jobs/job-service.js';
import { BatchService } from './batches/batch-service.js';
import { resolveServerOptions, type ResolvedServerOptions, type ServerOptions } from './options.js';
import { SERVER_DEFAULTS } from './defaults.js';
import { createOutputFiles } from './files/index.js';
import { createModelRoutes } from './models/model-routes.js';
import { notifyTerminal } from './jobs/terminal.js';
import type { RecoveryReport } from './store/types.js';
import { Gateway } from './ws/gateway.js';
import { createPullProtocol } from './pull/index.js';
import { Metrics } from './metrics/metrics.js';
import { BatchStats } from './jobs/batch-stats.js';
import { Monitor } from './monitor/monitor.js';
import { QueueWait } from './scaling/queue-wait.js';
import { LbService, type LbControl } from './lb/lb-service.js';
import type { ConnectedWorker, WorkerControl } from './scaling/worker-control.js';
import { WorkerEvents } from './jobs/worker-events.js';
import { servePlayground } from './playground/static.js';
import { WorkerRegistry } from './workers/worker-registry.js';
import { BlobFiles } from './blobs/blob-files.js';
import { JobBlobs } from './blobs/job-blobs.js';
import { createBlobRoutes } from './blobs/blob-routes.js';
import { WorkerAuth, type WorkerIdentity } from './keys/worker-auth.js';
import { JobTokens } from './tokens/job-tokens.js';
import { IssuingKeys } from './tokens/issuing-keys.js';

export interface ListenOptions {
  /** Default 8080; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
}

/** A Berth control plane: the queue API over HTTP and the worker WebSocket on one port. */
export interface BerthServer {
  /** The socket-free core: answers one request (tests use it without listening). */
  handle(req: ApiRequest): Promise<ApiResponse>;
  /**
   * Recovers what the store holds (running jobs get a `workerGraceMs` lease so their workers can reconnect and
   * finish them; endpoints with jobs are served at once), then listens.
   */
  listen(opts?: ListenOptions): Promise<{ url: string; port: number; recovered: RecoveryReport }>;
  /** Graceful stop: new requests get 503, workers are told to drain, waiting requests finish up to `drainMs`. */
  close(opts?: { drainMs?: number }): Promise<void>;
  /** For whoever starts and stops workers (`berth dev`, `--scale docker`): what the server sees of them, and its events. */
  readonly workers: WorkerControl;
  /** Runs one deadline sweep now (tests with a manual clock). */
  sweep(): Promise<SweepReport>;
  /** An endpoint's job counts and workers, as `GET /v2/<endpoint>/health` answers them. */
  health(endpointId: string): Promise<HealthReply>;
  readonly options: ResolvedServerOptions;
  /** Endpoint ids served. */
  endpoints(): string[];
  /** For whoever runs load-balancing endpoints' HTTP workers (`berth dev`, `--scale docker`): docs/load-balancing.md. */
  readonly lb: LbControl;
}

/**
 * Creates a control plane.
 *
 * @example
 * const server = createServer({ apiKeys: [key], workerTokens: [token], endpoints: ['echo'] });
 * const { url } = await server.listen({ port: 0 });
 */
export function createServer(options: ServerOptions = {}): BerthServer {
  const opts = resolveServerOptions(options);
  const endpoints = new Set(opts.endpoints);
  let runSweep = () => {};
  const alarm = new DeadlineAlarm(
    () => opts.clock.now(),
    () => runSweep(),
  );
  const workerEvents = new WorkerEvents();
  // Big inputs and outputs (issue #35): blob files beside a store that keeps references, else a temp spool folder.
  const blobs = new JobBlobs(
    new BlobFiles(
      opts.store.blobDir ?? mkdtempSync(join(tmpdir(), 'berth-spool-')),
      opts.maxBlobBytes,
      opts.logger,
      opts.store.durability === 'full',
    ),
    opts.store.blobDir !== undefined,
  );
  const ctx: CoreContext = {
    store: opts.store,
    blobs,
    workerEvents,
    events: new JobEvents(),
    registry: new WorkerRegistry(opts.clock),
    clock: opts.clock,
    logger: opts.logger,
    options: opts,
    onTerminal: [],
    batches: new BatchStats((endpointId, size) => metrics.batchStarted(endpointId, size)),
    tracer: opts.tracer ? new JobTracer(opts.tracer, { trustTraceparent: opts.trustTraceparent }) : undefined,
    // With the sweep timer off (tests drive `sweep()` with a manual clock), no alarm either.
    wakeAt: (t) => {
      if (opts.sweepIntervalMs > 0) alarm.at(t);
    },
  };
  // Webhooks: the store writes the outbox row with the terminal state; the sender delivers it (and, polling,
  // whatever a previous process left pending).
  const source = {
    endpoints: () => [...endpoints],
    counts: (id: string) => opts.store.counts(id),
    registry: ctx.registry,
    heartbeatMs: opts.heartbeatMs,
  };
  const metrics = new Metrics({ ...source, replicaId: opts.cluster?.replicaId });
  // Load-balancing endpoints (lb/): their workers' own HTTP servers behind the proxy.
  const lb = new LbService({
    endpoints: opts.lb,
    logger: opts.logger,
    metrics: metrics.lb,
    now: () => opts.clock.now(),
  });
  const monitor = new Monitor({ ...source, clock: opts.clock, logger: opts.logger, lb });
  metrics.lb.observer = monitor;
  ctx.onColdStart = (id) => {
    metrics.coldStart(id);
    monitor.coldStart(id);
  };
  const webhooks = new WebhookSender(opts.store, opts.webhooks, opts.clock, opts.logger, (outcome) =>
    metrics.webhookAttempt(outcome),
  );
  // start / progress / output deliveries of jobs that asked for them (webhookEvents), throttled, in order.
  ctx.eventWebhooks = new EventWebhooks(opts.store, opts.clock, opts.logger, () => webhooks.kick());
  ctx.onTerminal.push((job) => {
    metrics.jobFinished(job);
    monitor.jobFinished(job);
    workerEvents.emit('jobFinished', job);
    if (job.webhook !== undefined) {
      ctx.eventWebhooks?.ended(job.id);
      webhooks.kick();
    }
  });
  webhooks.start();
  if (ctx.tracer) ctx.onTerminal.push((job) => ctx.tracer?.finished(job));
  const dispatcher = new Dispatcher(ctx);
  const reports = new WorkerReports(ctx, dispatcher);
  const service = new JobService(ctx, dispatcher);
  const batches = new BatchService({ ctx, jobs: service, dispatcher, kickWebhooks: () => webhooks.kick() });
  if (opts.sweepIntervalMs > 0) batches.start();
  // Several replicas on one store: wake-ups, dispatch and stops cross processes (cluster/, docs/deployment.md).
  const cluster = opts.cluster ? wireCluster(ctx, dispatcher, opts.cluster) : undefined;
  // One check of worker credentials (shared tokens and stored per-endpoint worker tokens) for every worker route.
  const workerAuth = new WorkerAuth(opts.workerTokens, opts.keyStore);
  // Output files of workers without S3 (docs/output-storage.md) and public model slugs (docs/public-models.md).
  const files = createOutputFiles({
    dir: opts.filesDir,
    secret: opts.filesSecret,
    maxBytes: opts.maxFileBytes,
    publicUrl: opts.publicUrl,
    authorize: async (header, endpointId) => (await workerAuth.authenticateWorker(header, endpointId)) !== null,
    store: opts.store,
    clock: opts.clock,
    logger: opts.logger,
  });
  const models = createModelRoutes({
    models: opts.models,
    store: opts.store,
    clock: opts.clock,
    retention: opts.retention,
    logger: opts.logger,
    wakeAt: (t) => ctx.wakeAt(t),
    onTerminal: (job) => notifyTerminal(ctx, job),
  });
  let draining = false;
  const hasEndpoint = (id: string) => endpoints.has(id);
  // A worker may add an endpoint only when dynamic endpoints are allowed, or with a stored worker token created
  // for that endpoint (creating the token configured it).
  const registerEndpoint = (id: string, identity: WorkerIdentity) => {
    if (!ENDPOINT_ID_RE.test(id) || !(opts.acceptWorkerEndpoints || identity.endpoints?.includes(id))) return false;
    endpoints.add(id);
    return true;
  };
  // RunPod's worker protocol (pull/): its workers join the same registry and dispatcher as WebSocket ones.
  const pull = createPullProtocol({
    ctx,
    blobs,
    dispatcher,
    reports,
    // The same credentials as the WebSocket: a stored worker token serves only its endpoints (and configures
    // them, when its worker first polls or reports: `register` gets the identity).
    authenticate: (header, endpointId) => workerAuth.authenticateWorker(header, endpointId),
    hasEndpoint,
    register: registerEndpoint,
    draining: () => draining,
    holdMs: opts.pullHoldMs,
  });
  const api = createApi({
    service,
    batches,
    registry: ctx.registry,
    files: files.routes,
    blobRoutes: createBlobRoutes({
      blobs,
      store: opts.store,
      authorize: async (header, endpointId) => (await workerAuth.authenticateWorker(header, endpointId)) !== null,
      maxOutputBytes: opts.maxWorkerFrameBytes,
    }),
    blobs,
    pull: pull.handle,
    models,
    keys: new ApiKeyAuth(new KeyChecker(opts.apiKeys, 'key'), opts.keyStore),
    // Job tokens: signed with a key derived from a secret every replica shares (docs/job-tokens.md).
    jobTokens: new JobTokens(
      async () => opts.jobTokenSecret ?? opts.filesSecret ?? (await files.store.secret()),
      opts.clock,
      new IssuingKeys(opts.apiKeys, opts.keyStore),
    ),
    // Scopes (403) first, then rate limits (429, counted only for allowed requests), then the caller's guard.
    guard: combineGuards(
      scopeGuard,
      countRejections(
        createRateLimitGuard({
          limits: opts.rateLimits,
          clock: opts.clock,
          runningWorkers: (id) => ctx.registry.limitWorkers(id),
          replicas: () => 1 + ctx.registry.remote.count(),
        }),
        (g) => metrics.rateLimitRejected(g.endpointId, g.operation),
      ),
      opts.guard,
    ),
    store: opts.store,
    catalog: { endpoints: () => [...endpoints], models: opts.models, registry: ctx.registry, service, lb },
    playground: servePlayground,
    ...(lb.endpointIds().length > 0 ? { lb } : {}),
    lbDomain: opts.lbDomain,
    metrics,
    monitor,
    hasEndpoint,
    draining: () => draining,
    logger: opts.logger,
    // Endpoints without scaling settings answer 404 endpoint_not_found on /scaling, saying how to give them some.
    scaling: {
      policies: new Map(Object.entries(opts.scaling ?? {})),
      queueWait: new QueueWait(),
      now: () => opts.clock.now(),
    },
  });
  // Every answer is counted and timed by route family (berth_http_*).
  const handle = metrics.observeHttp(api);
  const gateway = new Gateway({
    ctx,
    dispatcher,
    reports,
    auth: workerAuth,
    hasEndpoint,
    register: registerEndpoint,
  });

  let sweeping = false;
  let sweepsStopped = false;
  runSweep = () => {
    if (sweepsStopped) return;
    if (sweeping) return void setTimeout(runSweep, 5).unref();
    sweeping = true;
    files.sweep().catch((err) => opts.logger.error('file sweep failed', { err }));
    blobs.sweepSometimes(opts.store).catch((err) => opts.logger.error('blob sweep failed', { err }));
    sweepDeadlines(ctx, dispatcher)
      .then((r) => r.more && setImmediate(runSweep)) // a deep backlog of due jobs: keep going
      .catch((err) => opts.logger.error('sweep failed', { err }))
      .finally(() => (sweeping = false));
  };
  const sweepTimer = opts.sweepIntervalMs > 0 ? setInterval(runSweep, opts.sweepIntervalMs) : undefined;
  sweepTimer?.unref();

  let http: Server | undefined;
  const track = { active: 0 };

  return {
    handle,
    health: async (id) => (lb.has(id) ? lb.health(id) : service.health(id)),
    lb,
    options: opts,
    endpoints: () => [...endpoints],
    workers: {
      connected: (id) =>
        lb.has(id)
          ? lb.connected(id)
          : ctx.registry.sessions(id).map((s): ConnectedWorker => {
              const w: ConnectedWorker = { workerId: s.workerId, running: s.inflight.size, draining: s.draining };
              if (ctx.registry.isLaneWorker(s.workerId)) w.lane = 'batch';
              return w;
            }),
      setExpected: (id, n) => ctx.registry.setExpected(id, n),
      setBroken: (id, broken) => ctx.registry.setHandlerBroken(id, broken),
      setWaitReason: (id, reason) => ctx.registry.setWaitReason(id, reason),
      setGpus: (id, held) => ctx.registry.setGpus(id, held),
      setBatchLane: (id, on) => {
        ctx.registry.setBatchLane(id, on);
        dispatcher.pump(id);
      },
      setLane: (id, lane) => ctx.registry.setLane(id, lane),
      batchBacklog: (id) => ctx.store.batchBacklog(id),
      stopping: (id) => {
        const s = ctx.registry.get(id);
        if (!s) return;
        s.draining = true;
        pull.release(id);
      },
      coldStart: (id, phase, ms) => metrics.scaler.coldStart(id, phase, ms),
      startFailed: (id, reason) => metrics.scaler.startFailed(id, reason),
      on: (event, fn) => workerEvents.on(event, fn),
    },
    sweep: async () => {
      await files.sweep();
      const swept = await sweepDeadlines(ctx, dispatcher);
      await blobs.sweep(opts.store);
      await batches.sweep();
      return swept;
    },
    async listen({ port = SERVER_DEFAULTS.port, host = SERVER_DEFAULTS.host } = {}) {
      const leaseUntil = opts.clock.now() + opts.workerGraceMs;
      const recovered = await opts.store.recover(leaseUntil);
      // Blob files of jobs deleted while the server was down, and uploads a crash cut short.
      const orphans = await blobs.sweep(opts.store, true);
      if (orphans > 0) opts.logger.info('removed orphan blob files', { count: orphans });
      await cluster?.start();
      for (const id of recovered.endpoints) if (ENDPOINT_ID_RE.test(id)) endpoints.add(id);
      monitor.start(); // the baseline of every endpoint's stored counters, then a sample every 5 s
      if (recovered.running > 0) ctx.wakeAt(leaseUntil);
      if (recovered.queued + recovered.running > 0) {
        opts.logger.info('recovered jobs', {
          queued: recovered.queued,
          running: recovered.running,
          graceMs: opts.workerGraceMs,
        });
      }
      // Deliberate timeouts and coded answers to malformed requests (http/node-server.ts, option httpTimeouts).
      http = createNodeServer(nodeHandler(handle, track, new BodyBudget(opts.maxBodyBytesInFlight)), opts.httpTimeouts);
      http.maxConnections = opts.maxConnections;
      // Only the worker socket's path is upgraded; any other request offering an upgrade (curl --http2 sends
      // `Upgrade: h2c`) is served as plain HTTP/1.1.
      const plain = http;
      http.on('upgrade', (req, socket, head) => {
        if (new URL(req.url ?? '/', 'http://x').pathname === WORKER_WS_PATH) gateway.handleUpgrade(req, socket, head);
        else serveWithoutUpgrade(plain, req, socket, head);
      });
      const server = http;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const addr = server.address() as AddressInfo;
      const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      return { url: `http://${shownHost}:${addr.port}`, port: addr.port, recovered };
    },
    async close({ drainMs = SERVER_DEFAULTS.drainMs } = {}) {
      if (draining) return;
      draining = true;
      gateway.drainAll(Date.now() + drainMs);
      // Keep listening (new requests get 503) while waiting requests and running jobs finish, up to drainMs.
      const until = performance.now() + drainMs;
      const busy = () => track.active > 0 || ctx.registry.sessions().some((s) => s.inflight.size > 0);
      while (busy() && performance.now() < until) await new Promise((r) => setTimeout(r, 20));
      if (sweepTimer) clearInterval(sweepTimer);
      sweepsStopped = true;
      batches.stop();
      alarm.stop();
      monitor.stop();
      metrics.stop();
      lb.close();
      pull.close();
      await gateway.close();
      if (http) {
        const server = http;
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      }
      await webhooks.stop();
      await files.close();
      await cluster?.close();
      await opts.store.close();
      if (!blobs.kept) rmSync(blobs.files.dir, { recursive: true, force: true }); // the temp spool folder
    },
  };
}
