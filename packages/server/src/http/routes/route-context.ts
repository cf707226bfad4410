import type { JobService } from '../../jobs/job-service.js';
import type { JobBlobs } from '../../blobs/job-blobs.js';
import type { WorkerRegistry } from '../../workers/worker-registry.js';
import type { JobTokens } from '../../tokens/job-tokens.js';
import type { Principal } from '../guard.js';
import type { ApiRequest } from '../types.js';

/** What a route handler gets: the request, who sent it, the endpoint and job id from the path. */
export interface RouteContext {
  req: ApiRequest;
  principal: Principal;
  endpointId: string;
  /** The `<job_id>` path segment, for routes that take one. */
  jobId: string;
  service: JobService;
  /** Big bodies streamed to blob files (the submit routes). */
  blobs: JobBlobs;
  registry: WorkerRegistry;
  /** Issues job tokens on submit (`"token": {...}`); unset where no route submits (the OpenAI routes). */
  tokens?: JobTokens;
  /** Price of the job a submit route stores (priced public models), see `JobRecord.cost`. */
  cost?: number;
}
