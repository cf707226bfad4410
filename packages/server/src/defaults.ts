import { LIMITS } from '@berth/protocol';

/**
 * The default of every server option and `listen`/`close` argument, in one place (`resolveServerOptions`
 * applies them; `ServerOptions` documents each). Wire limits shared with workers live in `LIMITS`
 * (@berth/protocol).
 */
export const SERVER_DEFAULTS = {
  port: 8080,
  host: '127.0.0.1',
  drainMs: 10_000,
  retention: { async: LIMITS.retentionAsync, sync: LIMITS.retentionSync },
  sweepIntervalMs: 1000,
  heartbeatMs: 5000,
  workerGraceMs: 10_000,
  maxAttempts: 3,
  pullHoldMs: 20_000,
  maxFileBytes: 100 * 1024 * 1024,
  // Ten 20 MB /runsync bodies (the spec's limit) at once, with room for smaller requests (docs/api.md says why).
  maxBodyBytesInFlight: 256 * 1024 * 1024,
  maxBlobBytes: 16 * 1024 * 1024 * 1024,
  maxConnections: 10_000,
  maxWorkerFrameBytes: LIMITS.workerFrameBytes,
  workerMessagesPerSecond: 5000,
} as const;

/** Bounds the server enforces on its own options and work, in one place. */
export const SERVER_LIMITS = {
  /** `pullHoldMs`: below runpod-python's 90 s client timeout, and long enough not to be a busy loop. */
  pullHoldMs: { min: 100, max: 80_000 },
  /** `filesSecret`: shortest accepted, characters. */
  filesSecretMinChars: 16,
  /** Due jobs one deadline sweep reads at most. */
  sweepBatch: 256,
  /**
   * The same for a store that deletes retained jobs in one statement (PostgreSQL's `deleteRetained`): its reads and
   * deletes wait on the database, not on the event loop, and each round trip waits its turn in a pool the traffic
   * keeps busy (issue #40: 279 deletes/s with 256 under /runsync c=50 at 1,000,000 finished jobs).
   */
  sweepBatchOneStatement: 2048,
  /** Most claims one dispatch pass issues before awaiting them. */
  claimBatch: 64,
} as const;
