/**
 * `Store.insert` of a job whose id is already stored. Atomic in every store (a primary key in SQLite and
 * PostgreSQL): of two replicas inserting the same id at once, exactly one succeeds. Idempotency keys rely on it.
 */
export class DuplicateJobError extends Error {
  constructor(readonly jobId: string) {
    super(`duplicate job id ${jobId}`);
    this.name = 'DuplicateJobError';
  }
}
