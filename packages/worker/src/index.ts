/**
 * @berth/worker: the worker runtime. Write a handler, call `start({ handler })`.
 *
 * @example
 * import { start } from '@berth/worker';
 * start({ handler: async (job) => ({ echo: job.input }) });
 */
export { start } from './start.js';
export type { BatchStartOptions, JobStartOptions, RetryOptions, StartOptions } from './options.js';
export type { InputSchema } from './internal/execute/input-schema.js';
/** zod v4, the version `inputSchema` expects (re-exported so handlers need no separate install). */
export { z } from 'zod';
export type { Handler, HandlerResult, Job, JobContext, JobInput } from './handler.js';
export { UnrecoverableError } from './errors.js';
export { createLogger, LOG_LEVELS } from './logger.js';
export type { Logger, LoggerOptions, LogFields, LogFormat, LogLevel, LogRecord, LogSink } from './logger.js';
export { deviceSetting, loadOnDevice, nvidiaDriverPresent } from './device.js';
export type { Device, DeviceSetting } from './device.js';
export type { BatchChunk, BatchHandler, BatchHandlerResult, BatchOptions, BatchOutputs } from './batch.js';
