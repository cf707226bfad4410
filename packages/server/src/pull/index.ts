import type { CoreContext } from '../jobs/context.js';
import type { Dispatcher } from '../jobs/dispatcher.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import { createPullRoutes } from './pull-routes.js';
import { PullWorkers } from './pull-workers.js';

export interface PullProtocolDeps {
  ctx: CoreContext;
  dispatcher: Dispatcher;
  /** The worker credential check, for the raw `Authorization` header and the endpoint named in the path. */
  authenticate(header: string | undefined, endpointId: string): boolean | Promise<boolean>;
  hasEndpoint(id: string): boolean;
  register(id: string): boolean;
  draining(): boolean;
  /** How long job-take and job-stop polls are held before 204. */
  holdMs: number;
}

/** RunPod's worker (pull) protocol: the routes, and the sessions they create in the shared worker registry. */
export function createPullProtocol(deps: PullProtocolDeps): { handle: (req: ApiRequest) => Promise<ApiResponse | undefined> | undefined; release(workerId: string): void; close(): void } {
  const workers = new PullWorkers(deps);
  const handle = createPullRoutes({ ...deps, workers });
  return { handle, release: (id) => workers.release(id), close: () => workers.close() };
}
