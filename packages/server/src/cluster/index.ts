export type { ClusterBus, ClusterMessage } from './types.js';
export { PgClusterBus } from './pg-cluster-bus.js';
export { wireCluster, type ClusterLink, type WireClusterOptions } from './wire-cluster.js';
