// The root of `@berth/server`: what a program embedding a control plane needs. The stores are subpath exports
// (`@berth/server/memory`, `/sqlite`, `/postgres`) so their drivers (optional peer dependencies) load only when
// used; the test clock is in `@berth/server/testing`. Each name comes from one entry point; everything else is
// internal.
export { createServer, type BerthServer, type ListenOptions } from './server.js';
export type { SweepReport } from './jobs/deadline-sweep.js';
export type { ColdStartPhase, StartFailure } from './metrics/scaler-metrics.js';
export { resolveServerOptions, type BatchOptions, type ServerOptions, type ResolvedServerOptions } from './options.js';
export { ConfigError, DuplicateJobError, MissingDependencyError, StoreUnavailableError } from './errors.js';
export {
  createLogger,
  silentLogger,
  type Logger,
  type LoggerOptions,
  type LogFormat,
  type LogLevel,
} from '@berth/protocol/log';
export { systemClock, type Clock } from './clock.js';
export type {
  Store,
  JobRecord,
  FinishPatch,
  DueJobs,
  EndpointCounts,
  RetentionPolicy,
  RecoveryReport,
  DeleteCondition,
  JobLog,
  JobLogLine,
  WebhookAttempt,
  WebhookDelivery,
} from './store/types.js';
export type { ClusterBus, ClusterMessage } from './cluster/types.js';
export type { ApiRequest, ApiResponse } from './http/types.js';
export type { Guard, GuardContext, KeyScope, Operation, Principal } from './http/guard.js';
export type { HttpTimeouts } from './http/node-server.js';
export type { LbControl } from './lb/lb-service.js';
export type { LbAddress } from './lb/balancer.js';
export type { LbEndpointOptions } from './lb/options.js';
export { createApiKey, type CreateKeyOptions } from './keys/create-key.js';
export type { KeyStore, StoredKey } from './keys/key-store.js';
export {
  resolveModels,
  type ModelConfig,
  type ModelKind,
  type PriceTable,
  type ImageLimits,
  type PublicModel,
} from './models/index.js';
export type { RateLimitOptions } from './limits/rate-limit-options.js';
export type { AllowableKind } from './webhooks/address-policy.js';
export type { WebhookOptions } from './webhooks/webhook-options.js';
export type { ScalerConfig, ScalingPolicy } from './scaling/policy.js';
export type { ConnectedWorker, WorkerControl } from './scaling/worker-control.js';
export type { WorkerEventMap } from './jobs/worker-events.js';
export type { ScalingLease } from './store/scaling-lease.js';
