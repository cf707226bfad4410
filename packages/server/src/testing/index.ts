// `@berth/server/testing`: what tests of code embedding a control plane need: a clock that moves only when told
// to (pair it with `sweepIntervalMs: 0` and `server.sweep()`), a logger that prints nothing, the in-memory store.
export { ManualClock } from '../clock.js';
export { silentLogger } from '../logger.js';
export { MemoryStore } from '../store/memory/memory-store.js';
