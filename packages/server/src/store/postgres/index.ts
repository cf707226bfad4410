// `@berth/server/postgres`: the PostgreSQL store (several replicas may share it), its API key store and the
// replicas' LISTEN/NOTIFY channel. Needs the optional peer dependency pg (loaded on first use; missing, it throws
// `MissingDependencyError`, code `missing_dependency`).
export { PgStore, type PgStoreOptions } from './pg-store.js';
export type { PgConnectionOptions } from './connect.js';
export { PgKeyStore } from '../../keys/pg-key-store.js';
export { PgClusterBus } from '../../cluster/pg-cluster-bus.js';
