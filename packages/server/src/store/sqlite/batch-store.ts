import type { BatchStore } from '../batch-types.js';
import type { SqliteBatches } from './batches.js';

type Run = <T>(op: (b: SqliteBatches) => T) => Promise<T>;

/**
 * `BatchStore` over the SQLite batch operations: writes run in the group commit (settling after its COMMIT),
 * reads after the open batch.
 */
export function sqliteBatchStore(write: Run, read: Run): BatchStore {
  return {
    createBatch: (batch, jobs, limits) => write((b) => b.createBatch(batch, jobs, limits)),
    getBatch: (id) => read((b) => b.getBatch(id)),
    listBatches: (endpointId, limit, after) => read((b) => b.listBatches(endpointId, limit, after)),
    renameBatch: (id, name) => write((b) => b.renameBatch(id, name)),
    addToBatch: (id, jobs, limits) => write((b) => b.addToBatch(id, jobs, limits)),
    removeFromBatch: (id, jobId) => write((b) => b.removeFromBatch(id, jobId)),
    finalizeBatch: (id, now) => write((b) => b.finalizeBatch(id, now)),
    releaseBatch: (id, limit) => write((b) => b.releaseBatch(id, limit)),
    cancelBatch: (id) => write((b) => b.cancelBatch(id)),
    cancelBatchJobs: (id, now, retention, limit) => write((b) => b.cancelBatchJobs(id, now, retention, limit)),
    batchCounts: (id) => read((b) => b.batchCounts(id)),
    batchJobs: (id, q) => read((b) => b.batchJobs(id, q)),
    runningBatchJobs: (id, limit) => read((b) => b.runningBatchJobs(id, limit)),
    batchLive: (id) => read((b) => b.batchLive(id)),
    endBatch: (id, now, status, delivery) => write((b) => b.endBatch(id, now, status, delivery)),
    unendedBatches: (limit) => read((b) => b.unendedBatches(limit)),
    endedBatches: (before, limit) => read((b) => b.endedBatches(before, limit)),
    deleteBatch: (id, limit) => write((b) => b.deleteBatch(id, limit)),
  };
}
