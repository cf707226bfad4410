export { createServer, type BerthServer, type ListenOptions } from './server.js';
export { resolveServerOptions, type ServerOptions, type ResolvedServerOptions } from './options.js';
export { createConsoleLogger, silentLogger, type Logger, type LogLevel } from './logger.js';
export { systemClock, ManualClock, type Clock } from './clock.js';
export { MemoryStore } from './store/memory-store.js';
export type { Store, JobRecord, FinishPatch, DueJobs, EndpointCounts, RetentionPolicy } from './store/types.js';
export type { ApiRequest, ApiResponse } from './http/types.js';
export type { Guard, GuardContext, Operation, Principal } from './http/guard.js';
export { toJobObject, toWebhookBody } from './jobs/job-view.js';
