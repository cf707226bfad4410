import type { Pool } from 'pg';
import { ident } from './connect.js';

/**
 * Versioned migrations, applied in order on start (table `berth_migrations` lists those applied). Never edit a
 * shipped migration: append a new one. Times are epoch ms (BIGINT); JSON values are stored as their text, so
 * what a worker sent is read back byte for byte.
 */
const MIGRATIONS: string[] = [
  `
  CREATE SEQUENCE queue_seq;
  CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    endpoint_id TEXT NOT NULL,
    status TEXT NOT NULL,
    input TEXT NOT NULL,
    webhook TEXT,
    s3_config TEXT,
    execution_timeout BIGINT NOT NULL,
    low_priority BOOLEAN NOT NULL,
    sync BOOLEAN NOT NULL,
    attempt INTEGER NOT NULL,
    retries INTEGER NOT NULL,
    worker_id TEXT,
    output TEXT,
    progress TEXT,
    error TEXT,
    created_at BIGINT NOT NULL,
    queued_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT,
    expires_at BIGINT NOT NULL,
    execution_deadline BIGINT,
    retain_until BIGINT,
    lease_until BIGINT,
    cost DOUBLE PRECISION,
    -- position in the endpoint's queue while IN_QUEUE
    queue_seq BIGINT,
    -- the replica whose worker runs the job (claim, or a worker adopted again after reconnecting)
    owner TEXT,
    -- stream chunks of the current attempt: how many were appended, how many a reader has taken
    stream_len INTEGER NOT NULL DEFAULT 0,
    stream_taken INTEGER NOT NULL DEFAULT 0,
    -- per-job log: lines stored and lines dropped past JOB_LOG_MAX_LINES
    log_len INTEGER NOT NULL DEFAULT 0,
    log_dropped INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX jobs_queue ON jobs (endpoint_id, queue_seq) WHERE status = 'IN_QUEUE';
  CREATE INDEX jobs_running ON jobs (worker_id) WHERE status = 'IN_PROGRESS';
  CREATE INDEX jobs_live ON jobs (endpoint_id, status) WHERE status IN ('IN_QUEUE', 'IN_PROGRESS');
  CREATE INDEX jobs_expires ON jobs (expires_at);
  CREATE INDEX jobs_execution_deadline ON jobs (execution_deadline) WHERE execution_deadline IS NOT NULL;
  CREATE INDEX jobs_retain_until ON jobs (retain_until) WHERE retain_until IS NOT NULL;
  CREATE INDEX jobs_lease_until ON jobs (lease_until) WHERE lease_until IS NOT NULL;
  CREATE INDEX jobs_recent ON jobs (endpoint_id, created_at DESC, id COLLATE "C" DESC);
  CREATE TABLE job_logs (
    job_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    at BIGINT NOT NULL,
    level TEXT NOT NULL,
    message TEXT NOT NULL,
    worker_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    fields TEXT,
    PRIMARY KEY (job_id, seq)
  );
  CREATE TABLE stream_chunks (
    job_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (job_id, seq)
  );
  -- counters split over a few rows per endpoint (shard) so concurrent commits do not queue on one row lock
  CREATE TABLE endpoint_stats (
    endpoint_id TEXT NOT NULL,
    shard SMALLINT NOT NULL,
    completed BIGINT NOT NULL DEFAULT 0,
    failed BIGINT NOT NULL DEFAULT 0,
    retried BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (endpoint_id, shard)
  );
  CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    job_id TEXT NOT NULL,
    endpoint_id TEXT NOT NULL,
    url TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    next_attempt_at BIGINT,
    attempts JSONB NOT NULL DEFAULT '[]'
  );
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, created_at) WHERE next_attempt_at IS NOT NULL;
  CREATE INDEX webhook_deliveries_job ON webhook_deliveries (job_id);
  -- API keys (berth keys create): only their SHA-256
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    hash TEXT NOT NULL,
    endpoints TEXT,
    read_only BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
  );
  -- control-plane replicas and when each was last seen (replica liveness: see PgReplicaWatch)
  CREATE TABLE replicas (
    id TEXT PRIMARY KEY,
    seen_at BIGINT NOT NULL
  );
  `,
  // 2: per-endpoint worker tokens live beside the API keys (berth keys create --worker)
  `ALTER TABLE api_keys ADD COLUMN kind TEXT NOT NULL DEFAULT 'api';`,
  `
  -- output files of workers without S3 (PgFileStore): metadata, and the bytes in 256 KiB pieces
  CREATE TABLE output_files (
    name TEXT PRIMARY KEY,
    content_type TEXT NOT NULL,
    size BIGINT NOT NULL,
    job_id TEXT NOT NULL,
    expires_at BIGINT NOT NULL
  );
  CREATE INDEX output_files_expires ON output_files (expires_at);
  CREATE TABLE output_file_pieces (
    name TEXT NOT NULL,
    idx INTEGER NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (name, idx)
  );
  -- images and audio are compressed already: store the pieces as they are
  ALTER TABLE output_file_pieces ALTER COLUMN data SET STORAGE EXTERNAL;
  -- values shared by every replica (the URL-signing secret of output files)
  CREATE TABLE settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  // 4: a claim must read the queue through jobs_queue (in queue order, stopping after LIMIT). With jobs_live there
  // and the table's statistics stale (a queue filled faster than autovacuum analyses it), the planner took
  // jobs_live and sorted every queued job of the endpoint on each claim: 57 ms per claim of 64 from a queue of
  // 100,000, against 1.1 ms through jobs_queue. Running counts per endpoint get their own partial index.
  `
  DROP INDEX jobs_live;
  CREATE INDEX jobs_running_endpoint ON jobs (endpoint_id) WHERE status = 'IN_PROGRESS';
  `,
  // 5: Batch Jobs (store/batch-types.ts): the batches, and the batch of a job. Its two indexes hold batch jobs only:
  // pages of a batch in id order, and its counts by state read from the index alone.
  `
  ALTER TABLE jobs ADD COLUMN batch_id TEXT;
  CREATE INDEX jobs_batch ON jobs (batch_id, id COLLATE "C") WHERE batch_id IS NOT NULL;
  CREATE INDEX jobs_batch_status ON jobs (batch_id, status) WHERE batch_id IS NOT NULL;
  CREATE TABLE batches (
    id TEXT PRIMARY KEY,
    endpoint_id TEXT NOT NULL,
    status TEXT NOT NULL,
    name TEXT,
    webhook TEXT,
    created_at BIGINT NOT NULL,
    finalized_at BIGINT,
    finished_at BIGINT,
    total BIGINT NOT NULL
  );
  CREATE INDEX batches_recent ON batches (endpoint_id, created_at DESC, id COLLATE "C" DESC);
  CREATE INDEX batches_unended ON batches (status) WHERE finished_at IS NULL;
  `,
];

/** A stable 32-bit key for the migration advisory lock of a schema. */
function lockKey(schema: string): number {
  let h = 0x811c9dc5;
  for (const c of `berth-migrate:${schema}`) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  return h | 0;
}

/**
 * Creates the schema if missing and applies the migrations this database has not seen, under an advisory lock so
 * replicas starting together do not race (the second waits, then finds nothing left to do).
 */
export async function migrate(pool: Pool, schema: string): Promise<number> {
  const c = await pool.connect();
  const ignore = () => {}; // a connection lost mid-migration fails the next statement; no unhandled 'error' event
  c.on('error', ignore);
  try {
    await c.query('SELECT pg_advisory_lock($1)', [lockKey(schema)]);
    try {
      await c.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
      await c.query(
        `CREATE TABLE IF NOT EXISTS ${ident(schema)}.berth_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`,
      );
      const r = await c.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${ident(schema)}.berth_migrations`);
      const current = r.rows[0]?.v ?? 0;
      if (current > MIGRATIONS.length) {
        throw new Error(
          `the database schema "${schema}" is version ${current}, newer than this Berth (${MIGRATIONS.length}); upgrade Berth`,
        );
      }
      for (let v = current; v < MIGRATIONS.length; v++) {
        await c.query('BEGIN');
        try {
          await c.query(`SET LOCAL search_path = ${ident(schema)}`);
          await c.query(MIGRATIONS[v]!);
          await c.query(`INSERT INTO berth_migrations (version, applied_at) VALUES ($1, $2)`, [v + 1, Date.now()]);
          await c.query('COMMIT');
        } catch (err) {
          await c.query('ROLLBACK');
          throw err;
        }
      }
      return MIGRATIONS.length;
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [lockKey(schema)]);
    }
  } finally {
    c.off('error', ignore);
    c.release();
  }
}
