import type { Database } from 'better-sqlite3';

/**
 * Versioned migrations, applied in order on open (`PRAGMA user_version` holds the last one applied). Never edit a
 * shipped migration: append a new one.
 */
const MIGRATIONS: string[] = [
  `
  CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    endpoint_id TEXT NOT NULL,
    status TEXT NOT NULL,
    input TEXT NOT NULL,
    webhook TEXT,
    s3_config TEXT,
    execution_timeout INTEGER NOT NULL,
    low_priority INTEGER NOT NULL,
    sync INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    retries INTEGER NOT NULL,
    worker_id TEXT,
    output TEXT,
    progress TEXT,
    error TEXT,
    created_at INTEGER NOT NULL,
    queued_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER,
    expires_at INTEGER NOT NULL,
    execution_deadline INTEGER,
    retain_until INTEGER,
    lease_until INTEGER,
    -- position in the endpoint's queue while IN_QUEUE
    queue_seq INTEGER,
    -- stream chunks of the current attempt: how many were appended, how many a reader has taken
    stream_len INTEGER NOT NULL DEFAULT 0,
    stream_taken INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX jobs_queue ON jobs (endpoint_id, queue_seq) WHERE status = 'IN_QUEUE';
  CREATE INDEX jobs_running ON jobs (worker_id) WHERE status = 'IN_PROGRESS';
  CREATE INDEX jobs_expires ON jobs (expires_at);
  CREATE INDEX jobs_execution_deadline ON jobs (execution_deadline) WHERE execution_deadline IS NOT NULL;
  CREATE INDEX jobs_retain_until ON jobs (retain_until) WHERE retain_until IS NOT NULL;
  CREATE INDEX jobs_lease_until ON jobs (lease_until) WHERE lease_until IS NOT NULL;
  CREATE TABLE stream_chunks (
    job_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (job_id, seq)
  ) WITHOUT ROWID;
  CREATE TABLE endpoint_stats (
    endpoint_id TEXT PRIMARY KEY,
    completed INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0,
    retried INTEGER NOT NULL DEFAULT 0
  );
  `,
  // 2: the price of a job on a priced public model (merged into its COMPLETED output)
  `ALTER TABLE jobs ADD COLUMN cost REAL;`,
  // 3: per-job logs (GET /v2/<ep>/logs/<id>) and the recent-jobs listing (GET /v2/<ep>/jobs)
  `
  CREATE TABLE job_logs (
    job_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    at INTEGER NOT NULL,
    level TEXT NOT NULL,
    message TEXT NOT NULL,
    worker_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    fields TEXT,
    PRIMARY KEY (job_id, seq)
  ) WITHOUT ROWID;
  ALTER TABLE jobs ADD COLUMN log_len INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE jobs ADD COLUMN log_dropped INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX jobs_recent ON jobs (endpoint_id, created_at DESC, id DESC);
  `,
  // 4: fewer index pages per commit (each dirty page is one WAL frame, two write syscalls). Running jobs get one
  // index instead of two (a claim and a finish each touched both): deadline order for the timeout sweep, the
  // worker id in the key so a worker's jobs are found by scanning running jobs' entries alone. The recent-jobs
  // index becomes ascending, read backwards: a new job is appended at the end of its endpoint's range instead of
  // written at its head, which split pages more often.
  `
  DROP INDEX jobs_running;
  DROP INDEX jobs_execution_deadline;
  CREATE INDEX jobs_in_progress ON jobs (execution_deadline, worker_id) WHERE status = 'IN_PROGRESS';
  DROP INDEX jobs_recent;
  CREATE INDEX jobs_recent ON jobs (endpoint_id, created_at, id);
  `,
  // 5: big inputs (64 KiB of JSON and more) in a table of their own (big-inputs.ts): SQLite rewrites a whole row on
  // every UPDATE, overflow pages included, so a 19 MB input in \`jobs\` was written again by the claim, the finish and
  // every lease. The job row keeps '' in \`input\`; deleting the job deletes its input.
  `
  CREATE TABLE job_inputs (job_id TEXT PRIMARY KEY, data TEXT NOT NULL);
  CREATE TRIGGER jobs_drop_input AFTER DELETE ON jobs WHEN old.input = '' BEGIN
    DELETE FROM job_inputs WHERE job_id = old.id;
  END;
  `,
  // 6: Batch Jobs (store/batch-types.ts): the batches, and the batch of a job. Its two indexes hold batch jobs only:
  // pages of a batch in id order, and its counts by state read from the index alone.
  `
  ALTER TABLE jobs ADD COLUMN batch_id TEXT;
  CREATE INDEX jobs_batch ON jobs (batch_id, id) WHERE batch_id IS NOT NULL;
  CREATE INDEX jobs_batch_status ON jobs (batch_id, status) WHERE batch_id IS NOT NULL;
  CREATE TABLE batches (
    id TEXT PRIMARY KEY,
    endpoint_id TEXT NOT NULL,
    status TEXT NOT NULL,
    name TEXT,
    webhook TEXT,
    created_at INTEGER NOT NULL,
    finalized_at INTEGER,
    finished_at INTEGER,
    total INTEGER NOT NULL
  );
  CREATE INDEX batches_recent ON batches (endpoint_id, created_at, id);
  CREATE INDEX batches_unended ON batches (status) WHERE finished_at IS NULL;
  `,
];

/** Applies the migrations this database has not seen yet, each in its own transaction. */
export function migrate(db: Database): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(
      `the database schema is version ${current}, newer than this Berth (${MIGRATIONS.length}); upgrade Berth`,
    );
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
  return MIGRATIONS.length;
}
