// `@berth/server/memory`: the in-memory job store (the default of `createServer`) and API key store. Nothing
// survives a restart; for tests and trials.
export { MemoryStore } from './memory-store.js';
export { MemoryKeyStore } from '../../keys/key-store.js';
