// `@berth/server/sqlite`: the embedded durable store and its API key store. Needs the optional peer dependency
// better-sqlite3 (loaded on first use; missing, it throws `MissingDependencyError`, code `missing_dependency`).
export { SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
export { SqliteKeyStore } from '../../keys/sqlite-key-store.js';
