/**
 * A batch's state, RunPod's newest names (runpod/docs `serverless/advanced-workflows/batch-jobs.mdx`, August 2026):
 * DRAFT (requests can be added and removed, none runs), FINALIZED (locked, its requests run; it stays FINALIZED
 * when they have all ended, `finishedAt` then says so), CANCELLED, FAILED (requests were lost before they ended:
 * deleted by their ttl). The older names (OPEN, RUNNING, COMPLETED) are read as filters only (docs/api.md).
 */
export type BatchStatus = 'DRAFT' | 'FINALIZED' | 'CANCELLED' | 'FAILED';

/**
 * A batch as the API answers it (`GET /v2/<ep>/batch/<id>`, the list, the terminal webhook): RunPod's newest fields
 * (`requestTotal`, `requestInProgress`, `requestCompleted`, `requestFailed`, `createdAt` in epoch ms) and Berth's
 * (`requestQueued`, `requestCancelled`, `requestExpired`, `progress`, `done`, `finalizedAt`, `finishedAt`). The
 * counts always add up: `requestTotal` is the sum of the six `request*` states.
 */
export interface BatchSummary {
  id: string;
  endpointId: string;
  name?: string;
  status: BatchStatus;
  requestTotal: number;
  requestQueued: number;
  requestInProgress: number;
  requestCompleted: number;
  /** FAILED and TIMED_OUT requests. */
  requestFailed: number;
  requestCancelled: number;
  /** Requests deleted by their ttl before they ended (a batch that ends with some is FAILED). */
  requestExpired: number;
  /** Ended requests (completed, failed, cancelled, expired) over the total, 0..1; 1 for an empty batch. */
  progress: number;
  /** Every request has ended (RunPod: `requestCompleted + requestFailed == requestTotal`). */
  done: boolean;
  /** Epoch ms. */
  createdAt: number;
  finalizedAt?: number;
  /** When the batch ended (its webhook was sent then). */
  finishedAt?: number;
}
