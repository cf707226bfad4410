export * from './errors.js';
export * from './limits.js';
export * from './job.js';
export * from './ws.js';
export * from './decode.js';
export * from './coalesce.js';
export * from './runpod-env.js';
export * from './replies.js';
