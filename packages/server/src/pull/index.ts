import type { CoreContext } from '../jobs/context.js';
import type { Dispatcher } from '../jobs/dispatcher.js';
import type { JobBlobs } from '../blobs/job-blobs.js';
import type { WorkerReports } from '../jobs/worker-reports.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import type { WorkerIdentity } from '../keys/worker-auth.js';
import { createPullRoutes, type PullCall } from './pull-routes.js';
import { PullWorkers } from './pull-workers.js';

export interface PullProtocolDeps {
  ctx: CoreContext;
  /** Big results streamed to blob files (issue #35). */
  blobs: JobBlobs;
  dispatcher: Dispatcher;
  reports: WorkerReports;
  /** The worker credential check, for the raw `Authorization` header and the endpoint named in the path: who it is, or null. */
  authenticate(header: string | undefined, endpointId: string): Promise<WorkerIdentity | null>;
  hasEndpoint(id: string): boolean;
  /** Adds an endpoint a worker names, when allowed for that identity (a stored per-endpoint token configures its endpoints). */
  register(id: string, identity: WorkerIdentity): boolean;
  draining(): boolean;
  /** How long job-take and job-stop polls are held before 204. */
  holdMs: number;
}

/** RunPod's worker (pull) protocol: the routes, and the sessions they create in the shared worker registry. */
export function createPullProtocol(deps: PullProtocolDeps): {
  /** Serves one request of the route table's pull routes. */
  handle: (req: ApiRequest, call: PullCall) => Promise<ApiResponse>;
  release(workerId: string): void;
  close(): void;
} {
  const workers = new PullWorkers(deps);
  const handle = createPullRoutes({ ...deps, workers });
  return { handle, release: (id) => workers.release(id), close: () => workers.close() };
}

export type { PullCall, PullOp } from './pull-routes.js';
