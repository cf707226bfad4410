/** Limits and defaults of the queue API (docs/api.md). All durations in milliseconds. */
export const LIMITS = {
  /** Body limit of POST /run, counted while reading. */
  runBodyBytes: 10 * 1024 * 1024,
  /** Body limit of POST /runsync, counted while reading. */
  runsyncBodyBytes: 20 * 1024 * 1024,
  /**
   * Largest WebSocket frame a worker may send (a result carries its output inline): 24 MB, room for a 20 MB
   * output (the size of a /runsync input) and its JSON envelope. The control plane closes a connection that
   * sends more (1009); the worker runtime fails such a job instead ("output too large"). Larger outputs go to
   * files or S3 (docs/output-storage.md).
   */
  workerFrameBytes: 24 * 1024 * 1024,
  /**
   * Bodies and worker outputs past this size are blobs (issue #35): streamed to a file on the control plane, the
   * job row holding a reference; workers fetch such inputs and upload such outputs over HTTP.
   */
  blobValueBytes: 256 * 1024,
  /** Highest worker concurrency (`hello.concurrency`, `concurrency` messages, `concurrencyModifier`). */
  workerConcurrencyMax: 1024,
  /** Most in-flight job attempts a worker lists in `hello.inflight`. */
  workerInflightMax: 1024,
  /** Body limit of every other route that takes a body. */
  otherBodyBytes: 64 * 1024,
  /** Deepest JSON nesting accepted in a request body. */
  jsonMaxDepth: 64,
  waitMin: 1_000,
  waitMax: 300_000,
  waitDefault: 90_000,
  /**
   * Default long-poll of /stream: well under the 10 s read timeout of common clients (runpod-python's
   * `Job.stream()`), so an answer never arrives after the client gave up.
   */
  streamWaitDefault: 5_000,
  executionTimeoutMin: 5_000,
  executionTimeoutMax: 7 * 24 * 3600_000,
  executionTimeoutDefault: 10 * 60_000,
  ttlMin: 10_000,
  ttlMax: 7 * 24 * 3600_000,
  ttlDefault: 24 * 3600_000,
  /** Retention after a terminal state. */
  retentionAsync: 30 * 60_000,
  retentionSync: 60_000,
  /** Lifetime of a job token (`"token": {"ttlSeconds"}` on /run and /runsync), seconds: 10 s to 24 h, default 15 min. */
  jobTokenTtlMinSeconds: 10,
  jobTokenTtlMaxSeconds: 24 * 3600,
  jobTokenTtlDefaultSeconds: 900,
} as const;

/** Endpoint ids and model slugs. */
export const ENDPOINT_ID_RE = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** Worker ids (`hello.workerId`, `BERTH_WORKER_ID`, the RunPod pull routes' worker segment). */
export const WORKER_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/** Job ids as the server mints them: `<uuid v4>-u1` and `sync-<uuid v4>-u1`. */
export const JOB_ID_RE = /^(sync-)?[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-u\d+$/;
