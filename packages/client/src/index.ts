export { createClient, type BerthClient, type ClientOptions } from './client.js';
export type { Batch, BatchAdded, BatchJob, BatchPage, BatchRequest, Batches, BatchStatus } from './batches.js';
export type { CallSignal, Endpoint, RunOptions, RunSyncOptions, WaitOptions } from './endpoint.js';
export { BerthApiError, BerthConnectionError, type ApiErrorCode } from './errors.js';
export type { AnyHandler, EndpointTypes, HandlerTypes, SchemaInput, SchemaLike } from './infer.js';
export type { StreamOptions } from './stream.js';
export type { RetryOptions } from './transport.js';
export type {
  Health,
  Job,
  JobLogs,
  JobPolicy,
  JobStatus,
  JobToken,
  LogLine,
  Purged,
  Queued,
  TokenRequest,
  WaitingFor,
  WebhookEvent,
} from './types.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyOptions,
  type WebhookVerificationCode,
} from './webhook.js';
