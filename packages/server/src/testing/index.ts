// `@berth/server/testing`: what tests of code embedding a control plane need beyond the root: a clock that moves
// only when told to (pair it with `sweepIntervalMs: 0` and `server.sweep()`). The logger that prints nothing is
// `silentLogger` from the root, the in-memory store `MemoryStore` from `@berth/server/memory`: one place each.
export { ManualClock } from '../clock.js';
