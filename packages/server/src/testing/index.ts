// `@berth/server/testing`: what tests of code embedding a control plane need beyond the root: a clock that moves
// only when told to (pair it with `sweepIntervalMs: 0` and `server.sweep()`) and a worker the test scripts message
// by message over a real WebSocket (`ScriptedWorker`). The logger that prints nothing is
// `silentLogger` from the root, the in-memory store `MemoryStore` from `@berth/server/memory`: one place each.
export { ManualClock } from '../clock.js';
export { ScriptedWorker } from './scripted-worker.js';
