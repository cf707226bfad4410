import type { Logger } from '@berth/protocol/log';
import type { JobService } from '../jobs/job-service.js';
import type { JobBlobs } from '../blobs/job-blobs.js';
import type { WorkerRegistry } from '../workers/worker-registry.js';
import type { Authenticator } from './auth.js';
import type { Guard } from './guard.js';
import type { ApiRequest, ApiResponse } from './types.js';
import type { ModelRoutes } from '../models/model-routes.js';
import type { Store } from '../store/types.js';
import type { ScalingDeps } from './routes/scaling.js';
import type { CatalogDeps } from './routes/catalog.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Monitor } from '../monitor/monitor.js';
import type { JobTokens } from '../tokens/job-tokens.js';
import type { LbService } from '../lb/lb-service.js';
import type { FileRoutes } from '../files/file-routes.js';
import type { BlobRoutes } from '../blobs/blob-routes.js';
import type { PullCall } from '../pull/pull-routes.js';
import type { BatchService } from '../batches/batch-service.js';

/** What the HTTP API's routes are served with (`createApi`); an optional part unset leaves its routes out. */
export interface ApiDeps {
  service: JobService;
  /** Batch Jobs (`/v2/<ep>/batch...`, routes/batch-routes.ts); unset: no such routes. */
  batches?: BatchService;
  /** Big bodies streamed to blob files (issue #35). */
  blobs: JobBlobs;
  registry: WorkerRegistry;
  keys: Authenticator;
  /** Job tokens (docs/job-tokens.md): issued on submit, accepted in place of a key on their job's routes. */
  jobTokens: JobTokens;
  /** For the webhook delivery log route. */
  store: Store;
  guard: Guard;
  /** Whether an endpoint id is served. */
  hasEndpoint(id: string): boolean;
  /** True while shutting down: every request answers 503. */
  draining(): boolean;
  logger: Logger;
  /** Worker uploads and signed downloads of output files (`/v2/_worker/files/...`, `/files/...`). */
  files?: FileRoutes;
  /** A worker's big inputs and outputs (`/v2/_worker/jobs/<id>/input|output`). */
  blobRoutes?: BlobRoutes;
  /** RunPod's worker protocol (`/v2/<ep>/job-take/<worker>`, ...: `../pull/`). */
  pull?: (req: ApiRequest, call: PullCall) => Promise<ApiResponse>;
  /** Public model slugs in place of endpoint ids. */
  models?: ModelRoutes;
  /** `GET /v2/_berth/catalog` (the playground's picker). */
  catalog?: CatalogDeps;
  /** `GET /metrics` (Prometheus text; needs an API key like every route). */
  metrics?: Metrics;
  /** `GET /v2/<ep>/monitor` (the Monitor view's history). */
  monitor?: Monitor;
  /** `GET /v2/<ep>/scaling` (KEDA): endpoints' scaling policies. */
  scaling?: ScalingDeps;
  /** Load-balancing endpoints: `/v2/<ep>/lb/<path>` proxied to their workers (`../lb/`). */
  lb?: LbService;
  /** Host-based routing of load-balancing endpoints (`<ep>.<lbDomain>`). */
  lbDomain?: string | undefined;
  /** The playground page: `GET /` and `GET /playground/<file>` (no key needed; the page asks for one). */
  playground?: (req: ApiRequest) => ApiResponse | undefined;
}
