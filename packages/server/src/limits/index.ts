export { FixedWindowCounter } from './fixed-window.js';
export { createRateLimitGuard, type RateLimitDeps } from './rate-limit-guard.js';
export { DEFAULT_PER_WORKER, DEFAULT_RATE_LIMITS, RATE_LIMIT_WINDOW_MS, resolveRateLimits, type LimitedOperation, type RateLimitOptions, type ResolvedRateLimits } from './rate-limit-options.js';
