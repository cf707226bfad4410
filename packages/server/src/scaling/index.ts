// `@berth/server/scaling`: the scale loop and the pool interface, for a program that starts and stops workers
// (the CLI's process and Docker pools). The server's side of it is `server.workers` (`WorkerControl`, a root type).
export { ScaleLoop, type ScaleLoopOptions, type ScaledPolicy } from './scale-loop.js';
export type { PoolWaitReason, PoolWorker, WorkerPool } from './worker-pool.js';
export { nextWorkerId } from './policy.js';
export { GpuAllocator, type GpuHolding } from './gpu-allocator.js';
export { batchLanePolicy, batchLaneViews, type BatchLaneConfig } from './batch-lane.js';
